//! Simplified Chinese for the task's working folder (header chip, picker, first-run line),
//! Settings' agent section and the pet's bubble while a turn waits for the person, keyed by the
//! English text the source uses.

#[rustfmt::skip]
pub const ZH_FOLDERS: &[(&str, &str)] = &[
    ("Where this task works", "此任务的工作位置"),
    ("Where this task works: its commands run here and its files are written here.", "此任务的工作位置：它的命令在这里运行，文件写在这里。"),
    ("The folder above", "上一级文件夹"),
    ("Work here", "在这里工作"),
    ("Each task works in its own folder (📁 above: a workspace in Cairn's home until you choose another). Cairn asks before overwriting a file or working outside that folder; Settings → Agent changes that.", "每个任务都在自己的文件夹里工作（上方的 📁：在你选择其他文件夹之前，是 Cairn 主目录中的工作区）。覆盖文件或在该文件夹之外操作前，Cairn 会先询问；可在“设置 → 智能体”中更改。"),
    ("Task folder", "任务文件夹"),
    ("Ask before overwriting a file or working outside the task's folder", "覆盖文件或在任务文件夹之外操作前先询问"),
    ("Cairn asks before overwriting a file or working outside the task's folder.", "覆盖文件或在任务文件夹之外操作前，Cairn 会先询问。"),
    ("Cairn no longer asks before overwriting files or working outside the task's folder.", "覆盖文件或在任务文件夹之外操作前，Cairn 不再询问。"),
    ("Every change", "每次更改"),
    ("Ask before every command and file change", "每次运行命令或更改文件前先询问"),
    ("Cairn asks before every command and file change.", "每次运行命令或更改文件前，Cairn 都会先询问。"),
    ("Commands and file changes in the task's folder run without asking.", "任务文件夹内的命令和文件更改无需询问即可运行。"),
    ("Workspace", "工作区"),
    ("Where a new task works until you choose its folder (📁 above the messages). Tasks remember their folder.", "新任务在你选择文件夹（消息上方的 📁）之前的工作位置。任务会记住自己的文件夹。"),
    ("Saved. New tasks start in the workspace.", "已保存。新任务从工作区开始。"),
    ("Cairn has a question for you.", "Cairn 有个问题要问你。"),
    ("Answer in the workbench", "在工作台中回答"),
];
