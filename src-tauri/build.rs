//! Reads the desktop app's config (`../tauri.conf.json`, at the repository's top level, beside the
//! `icons/` it names) and rebuilds the app whenever the UI in `../ui/dist` (embedded into the
//! binary) changes.

fn main() {
    println!("cargo:rerun-if-changed=../ui/dist");
    if let Err(e) =
        tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
    {
        println!("cargo:warning=tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
