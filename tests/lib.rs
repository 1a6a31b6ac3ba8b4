//! Cross-crate end-to-end tests live in `tests/` (the crate layering over `cargo metadata`, the real
//! desktop app under Xvfb through WebDriver, the headless builds, the installed package) and the
//! desktop start benchmark in `benches/`; this library is empty on purpose (cargo needs a target to
//! hang them on).
