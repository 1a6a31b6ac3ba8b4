//! Simplified Chinese for the texts the hands-on review added (issue #48): copy buttons, notices,
//! friendly errors, the on-device models' descriptions.

#[rustfmt::skip]
pub const ZH_REVIEW: &[(&str, &str)] = &[
    // markdown.rs, dom.rs, workbench/messages.rs
    ("Copy", "复制"),
    ("Copied", "已复制"),
    ("Copy the reply", "复制这条回复"),
    // settings_models.rs: the catalogue's descriptions (crates/models/src/catalog.rs), and /model
    ("twice as fast; answers questions, but often calls the wrong tool", "速度快一倍；能回答问题，但常常调用错误的工具"),
    ("the default: answers, writes files and calls tools on any machine", "默认模型：在任何电脑上都能回答问题、写文件和调用工具"),
    ("tiny and fast; chats, but does not call tools well", "小巧快速；能聊天，但不擅长调用工具"),
    ("memory search by meaning; without it recall matches words only", "按含义搜索记忆；没有它时，召回只按字词匹配"),
    ("memory search by meaning in Chinese and other languages (the embedder when the app speaks Chinese)", "按含义搜索中文及其他语言的记忆（界面为中文时使用的嵌入模型）"),
    ("voice input in English, fast on any machine", "英语语音输入，在任何电脑上都很快"),
    ("voice input in other languages (Chinese among them); slower", "其他语言（包括中文）的语音输入；较慢"),
    ("On this device (Cairn's own models):", "本机（Cairn 自带的模型）："),
    ("not installed: Settings → Models on this device", "未安装：设置 → 本机模型"),
    ("installed, cannot run here", "已安装，但无法在此运行"),
    // notice.rs
    ("Details", "详情"),
    ("Voice input needs its speech model: install it in Settings → Models on this device.", "语音输入需要语音模型：请在 设置 → 本机模型 中安装。"),
    ("Cairn cannot hear a microphone on this computer. Connect one (or choose a WAV file in Settings → Voice), then try again.", "Cairn 在这台电脑上找不到可用的麦克风。请连接一个（或在 设置 → 语音 中选择 WAV 文件），然后再试。"),
    ("Something went wrong inside Cairn. Try again; if it happens again, Settings → Diagnostics makes a report to share.", "Cairn 内部出了问题。请再试一次；如果再次发生，可在 设置 → 诊断 中生成报告并分享。"),
    ("That did not work; the details say why, in the system's own words.", "操作没有成功；详情中有系统给出的原因。"),
];
