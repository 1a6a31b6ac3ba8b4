//! The harness the desktop end-to-end tests share: the app started under `tauri-driver` +
//! `WebKitWebDriver` (and everything it started killed however the test ends), the workspace's
//! binaries found beside the test binary, waits on the page's text, and screenshots kept under
//! `target/e2e/`.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// How long the waits on the page give it, unless told otherwise.
pub const WAIT: Duration = Duration::from_secs(20);

/// Kills the driver, WebKitWebDriver and the app (one process group) however the test ends.
pub struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        std::thread::sleep(Duration::from_millis(500));
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// The display the tests share. An app holds it shared while it runs; a test that asks which
/// windows are on screen holds it alone, so another test's window is never among them.
static SCREEN: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// How an app holds the display.
enum ScreenHold {
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'static, ()>),
}

/// A running app and the WebDriver session driving it (fields drop in order: the display is
/// given back once the app is gone).
pub struct App {
    pub client: Client,
    _driver: Driver,
    _screen: ScreenHold,
}

impl App {
    /// Closes the session; the driver's process group goes with `_driver`.
    pub async fn close(self) {
        let _ = self.client.close().await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// An environment variable for the app: set to the value, or removed (`None`).
pub type EnvVar<'a> = (&'a str, Option<&'a OsStr>);

/// `GTK_THEME=Adwaita:dark` when `dark` (WebKit follows it for `prefers-color-scheme`), else no
/// `GTK_THEME` at all.
pub fn gtk_theme(dark: bool) -> EnvVar<'static> {
    ("GTK_THEME", dark.then(|| OsStr::new("Adwaita:dark")))
}

/// The desktop app on the data home `home`, which is also its `HOME` (so nothing of this
/// machine's agents' history or config leaks in), with `extra` variables.
pub async fn launch_at(home: &Path, extra: &[EnvVar<'_>]) -> TestResult<App> {
    launch_at_window(home, extra, "Cairn").await
}

/// [`launch_at`], with the session on the window titled `title` (the one the app opens first).
pub async fn launch_at_window(home: &Path, extra: &[EnvVar<'_>], title: &str) -> TestResult<App> {
    launch_on_window(&desktop_binary()?, &home_env(home, extra), title).await
}

/// The variables that make `home` the app's data home and `HOME`, then `extra`.
fn home_env<'a>(home: &'a Path, extra: &[EnvVar<'a>]) -> Vec<EnvVar<'a>> {
    let mut env: Vec<EnvVar<'a>> = vec![
        ("CAIRN_HOME", Some(home.as_os_str())),
        ("HOME", Some(home.as_os_str())),
        ("CAIRN_CONFIG", None),
        ("XDG_CONFIG_HOME", None),
    ];
    env.extend_from_slice(extra);
    env
}

/// [`launch_at_window`] with the display to itself: no other test's window is on screen.
pub async fn launch_alone_at_window(
    home: &Path,
    extra: &[EnvVar<'_>],
    title: &str,
) -> TestResult<App> {
    let screen = ScreenHold::Alone(SCREEN.write().await);
    start(&desktop_binary()?, &home_env(home, extra), title, screen).await
}

/// Starts `app` under tauri-driver with `env` (each variable set, or removed when `None`; the rest
/// of this process's environment is inherited) and connects a WebDriver session to it, on the
/// workbench window.
pub async fn launch(app: &Path, env: &[EnvVar<'_>]) -> TestResult<App> {
    launch_on_window(app, env, "Cairn").await
}

/// [`launch`], with the session on the window titled `title` (the first one the app opens).
pub async fn launch_on_window(app: &Path, env: &[EnvVar<'_>], title: &str) -> TestResult<App> {
    let screen = ScreenHold::Shared(SCREEN.read().await);
    start(app, env, title, screen).await
}

async fn start(app: &Path, env: &[EnvVar<'_>], title: &str, screen: ScreenHold) -> TestResult<App> {
    start_driver(Command::new("tauri-driver"), app, env, title, screen).await
}

/// Starts the installed `app` under `driver` — a command that ends by running tauri-driver, e.g.
/// as another user (`runuser -u someone -- env HOME=… /path/tauri-driver`) — alone on the display.
pub async fn launch_with_driver(driver: Command, app: &Path, title: &str) -> TestResult<App> {
    let screen = ScreenHold::Alone(SCREEN.write().await);
    start_driver(driver, app, &[], title, screen).await
}

async fn start_driver(
    mut command: Command,
    app: &Path,
    env: &[EnvVar<'_>],
    title: &str,
    screen: ScreenHold,
) -> TestResult<App> {
    let port = free_port()?;
    let native_port = free_port()?;
    command
        .args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native_port.to_string(),
        ])
        .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
        .process_group(0)
        .stdout(Stdio::null());
    for (key, value) in env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let driver = Driver(command.spawn()?);
    let capabilities = json!({
        "browserName": "wry",
        "tauri:options": { "application": app }
    });
    let Value::Object(capabilities) = capabilities else {
        return Err("capabilities must be an object".into());
    };
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = loop {
        match ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities.clone())
            .connect(&url)
            .await
        {
            Ok(client) => break client,
            Err(e) if Instant::now() > deadline => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    };
    let app = App {
        client,
        _driver: driver,
        _screen: screen,
    };
    switch_to_window_titled(&app.client, title).await?;
    Ok(app)
}

pub fn free_port() -> TestResult<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A binary of the workspace next to this test binary (`target/debug/deps/<test>-…`), or where the
/// environment variable `env` says.
pub fn workspace_binary(name: &str, env: &str) -> TestResult<PathBuf> {
    if let Ok(path) = std::env::var(env) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().and_then(Path::parent).ok_or("no target dir")?;
    let binary = dir.join(name);
    if !binary.exists() {
        return Err(format!(
            "{} is missing: run `cargo build --workspace` first",
            binary.display()
        )
        .into());
    }
    Ok(binary)
}

/// `target/debug/cairn-desktop` (or `$CAIRN_DESKTOP_BIN`).
pub fn desktop_binary() -> TestResult<PathBuf> {
    workspace_binary("cairn-desktop", "CAIRN_DESKTOP_BIN")
}

/// Sends keys to whatever has the focus (as a keyboard does).
pub async fn keys(client: &Client, text: &str) -> TestResult {
    client.active_element().await?.send_keys(text).await?;
    Ok(())
}

/// Runs `cairn` (`target/debug/cairn` or `$CAIRN_BIN`) on `home`; its standard output, or an
/// error with its standard error.
pub fn cairn(home: &Path, args: &[&str]) -> TestResult<String> {
    let output = Command::new(workspace_binary("cairn", "CAIRN_BIN")?)
        .args(args)
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_CONFIG")
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "cairn {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs a command and returns its standard output.
pub fn run(program: &str, args: &[&str]) -> TestResult<String> {
    let output = Command::new(program).args(args).output()?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `target/e2e/`, where the screenshots go.
pub fn screenshot_dir() -> TestResult<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("e2e");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Keeps the page in both themes, 300 ms after the last step: for each of light and dark, the
/// screen as a person sees it (the X display, `<name>-<theme>.png`) and WebDriver's view of the
/// current window (`<name>-<theme>-webview.png`). The page's own theme is restored afterwards.
pub async fn screenshot(client: &Client, name: &str) -> TestResult {
    screenshot_after(client, name, Duration::from_millis(300)).await
}

/// [`screenshot`], after letting the page settle for `settle`.
pub async fn screenshot_after(client: &Client, name: &str, settle: Duration) -> TestResult {
    let dir = screenshot_dir()?;
    tokio::time::sleep(settle).await;
    let original = client
        .execute(
            "return document.documentElement.getAttribute('data-theme');",
            vec![],
        )
        .await?;
    let set_theme = "const t = arguments[0]; const r = document.documentElement; \
                     if (t === null) { r.removeAttribute('data-theme'); } else { r.setAttribute('data-theme', t); }";
    for theme in ["light", "dark"] {
        client.execute(set_theme, vec![json!(theme)]).await?;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let screen = Command::new("import")
            .args(["-window", "root"])
            .arg(dir.join(format!("{name}-{theme}.png")))
            .status()?;
        if !screen.success() {
            return Err(format!("import could not capture the display for {name}").into());
        }
        std::fs::write(
            dir.join(format!("{name}-{theme}-webview.png")),
            client.screenshot().await?,
        )?;
    }
    client.execute(set_theme, vec![original]).await?;
    Ok(())
}

/// The DOM's text of the first element matching `css` (textContent: what the DOM holds, whatever
/// CSS does to case; WebKitWebDriver's rendered text can be stale under Xvfb), or `None` when there
/// is none.
pub async fn text_of(client: &Client, css: &str) -> TestResult<Option<String>> {
    let script = "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;";
    Ok(match client.execute(script, vec![json!(css)]).await? {
        Value::String(text) => Some(text),
        _ => None,
    })
}

/// Waits up to `within` until the text of `css` satisfies `check` (`what` says what it waits for,
/// for the error); returns it.
pub async fn wait_until_text(
    client: &Client,
    css: &str,
    what: &str,
    within: Duration,
    check: impl Fn(&str) -> bool,
) -> TestResult<String> {
    let deadline = Instant::now() + within;
    let mut last = None;
    while Instant::now() < deadline {
        if let Ok(Some(text)) = text_of(client, css).await {
            if check(&text) {
                return Ok(text);
            }
            last = Some(text);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let page = client.source().await.unwrap_or_default();
    Err(format!("{css} never {what}; last text {last:?}; the page:\n{page}").into())
}

/// Waits up to [`WAIT`] until the text of `css` contains `wanted`; returns it.
pub async fn wait_for_text(client: &Client, css: &str, wanted: &str) -> TestResult<String> {
    wait_for_text_within(client, css, wanted, WAIT).await
}

/// Waits up to `within` until the text of `css` contains `wanted`; returns it.
pub async fn wait_for_text_within(
    client: &Client,
    css: &str,
    wanted: &str,
    within: Duration,
) -> TestResult<String> {
    wait_until_text(client, css, &format!("showed {wanted:?}"), within, |t| {
        t.contains(wanted)
    })
    .await
}

/// Clicks the element matching `css` through WebDriver, as a person would, once it is there.
pub async fn click(client: &Client, css: &str) -> TestResult {
    let deadline = Instant::now() + WAIT;
    loop {
        match client.find(Locator::Css(css)).await {
            Ok(element) => {
                element.click().await?;
                return Ok(());
            }
            Err(e) if Instant::now() > deadline => {
                return Err(format!("no {css} to click: {e}").into())
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The id of the element with the keyboard focus (its class when it has no id; empty for none).
pub async fn focused(client: &Client) -> TestResult<String> {
    let id = client
        .execute(
            "return document.activeElement ? (document.activeElement.id || document.activeElement.className) : '';",
            vec![],
        )
        .await?;
    Ok(id.as_str().unwrap_or_default().to_owned())
}

/// Switches the session to the window titled `title`, waiting for it to open.
pub async fn switch_to_window_titled(client: &Client, title: &str) -> TestResult {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        for handle in client.windows().await? {
            client.switch_to_window(handle).await?;
            if client.title().await? == title {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(format!("no window titled {title:?}").into())
}

/// This machine's installed models folder (`~/.cairn/models`, or `$CAIRN_MODELS_HOME/models`)
/// when it holds `file`; `None`, and the test skipped, where setup has not installed it, unless
/// `CAIRN_REQUIRE_MODELS` says it must be there.
pub fn installed_models(file: &str) -> TestResult<Option<PathBuf>> {
    let models = std::env::var_os("CAIRN_MODELS_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cairn")))
        .ok_or("no HOME")?
        .join("models");
    if models.join(file).is_file() {
        return Ok(Some(models));
    }
    assert!(
        std::env::var_os("CAIRN_REQUIRE_MODELS").is_none(),
        "{} is missing: run ./run setup",
        models.join(file).display()
    );
    eprintln!("skipped: {} is not installed", models.join(file).display());
    Ok(None)
}

/// Sets the value of the field `css` as typing would (its `input` event fires).
pub async fn set_value(client: &Client, css: &str, value: &str) -> TestResult {
    fire(client, css, value, "input").await
}

/// Picks `value` in the select `css` as a person would (its `change` event fires).
pub async fn choose(client: &Client, css: &str, value: &str) -> TestResult {
    fire(client, css, value, "change").await
}

async fn fire(client: &Client, css: &str, value: &str, event: &str) -> TestResult {
    client
        .execute(
            "const e = document.querySelector(arguments[0]); e.value = arguments[1];\
             e.dispatchEvent(new Event(arguments[2], { bubbles: true }));",
            vec![json!(css), json!(value), json!(event)],
        )
        .await?;
    Ok(())
}
