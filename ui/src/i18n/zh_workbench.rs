//! Simplified Chinese for the workbench's stream, composer, first-run setup and slash commands,
//! keyed by the English text the source uses.

#[rustfmt::skip]
pub const ZH_WORKBENCH: &[(&str, &str)] = &[
    // setup.rs
    ("Address", "地址"),
    ("Cairn works with the model you choose. Your key stays in your config file or in an environment variable.", "Cairn 使用你选择的模型。密钥只保存在你的配置文件或环境变量中。"),
    ("Choose the model to chat with.", "请选择用于对话的模型。"),
    ("Connect a model to start", "连接一个模型以开始"),
    ("Kind of provider", "服务商类型"),
    ("Start chatting", "开始对话"),
    ("e.g. gpt-4o; the test lists what the server offers", "例如 gpt-4o；测试会列出服务器提供的模型"),
    ("sk-…, or ${OPENAI_API_KEY} to read it from the environment", "sk-…，或填写 ${OPENAI_API_KEY} 从环境变量读取"),
    ("Connected. {message}", "已连接。{message}"),
    ("Connected: the server offers {n} models. Pick one and start.", "已连接：服务器提供 {n} 个模型。选择一个即可开始。"),
    ("Found the history of other agents on this machine: {names}. Import it from Sources to have Cairn remember it.", "在这台电脑上发现了其他智能体的历史：{names}。在“来源”中导入，Cairn 就能记住它们。"),
    // workbench.rs
    ("The config file has an error", "配置文件有错误"),
    ("Open Settings", "打开设置"),
    ("Connected to {model}. Write your first message below: Enter sends.", "已连接 {model}。在下方写下第一条消息，按 Enter 发送。"),
    ("This task has no message to run again.", "这个任务还没有可以重新运行的消息。"),
    ("Open a task to run its last message again.", "打开一个任务，才能重新运行它的最后一条消息。"),
    ("Open a task (or start one) to give it a goal.", "打开（或新建）一个任务，才能为它设定目标。"),
    ("Let's continue this earlier work where it stopped.", "让我们从上次停下的地方继续这项工作。"),
    ("Nothing in memory matches \"{words}\".", "记忆中没有与“{words}”相符的内容。"),
    ("At most 4 files per message.", "每条消息最多附带 4 个文件。"),
    ("{name} is over 10 MB, the limit for an attachment.", "{name} 超过了 10 MB 的附件上限。"),
    ("Attached files", "已附加的文件"),
    ("Remove {name}", "移除 {name}"),
    ("Attach images or text files (up to 4, 10 MB each)", "附加图片或文本文件（最多 4 个，每个不超过 10 MB）"),
    ("Attach files", "附加文件"),
];
