//! The installed package, used as a new person would: `/usr/bin/cairn-desktop` started as an
//! ordinary user with an empty home, the first run's models installed from the registries, a
//! model server connected, and a first answer. `./run package-test` builds and installs the .deb,
//! creates the user, runs this (feature `package-test`), and removes the package afterwards.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cairn_test_support::{text_reply, MockServer};
use common::{click, screenshot, wait_for_text, wait_for_text_within, TestResult};
use fantoccini::Locator;

/// What `./run package-test` prepared.
struct Installed {
    user: String,
    home: PathBuf,
    driver: PathBuf,
}

fn installed() -> TestResult<Installed> {
    let var = |name: &str| {
        std::env::var(name)
            .map_err(|_| format!("{name} is not set: run this through ./run package-test"))
    };
    Ok(Installed {
        user: var("CAIRN_PACKAGE_USER")?,
        home: PathBuf::from(var("CAIRN_PACKAGE_HOME")?),
        driver: PathBuf::from(var("CAIRN_PACKAGE_DRIVER")?),
    })
}

/// tauri-driver as the user, with the environment a desktop session gives a program and nothing of
/// this process's (no CAIRN_HOME, no cargo paths).
fn driver_as(user: &Installed) -> TestResult<Command> {
    let display = std::env::var("DISPLAY").map_err(|_| "DISPLAY is not set")?;
    let mut command = Command::new("runuser");
    command
        .args(["-u", &user.user, "--", "env", "-i"])
        .arg(format!("HOME={}", user.home.display()))
        .arg(format!("USER={}", user.user))
        .arg(format!("DISPLAY={display}"))
        .arg("PATH=/usr/local/bin:/usr/bin:/bin")
        .arg("LANG=C.UTF-8")
        .arg(&user.driver);
    Ok(command)
}

#[tokio::test]
async fn the_installed_app_sets_itself_up_and_answers() -> TestResult {
    let user = installed()?;
    let data = user.home.join(".cairn");
    assert!(
        !data.exists(),
        "the user's home is not empty: {}",
        data.display()
    );
    let model = MockServer::start(vec![text_reply("Hello from the installed app.")]).await?;
    let app = common::launch_with_driver(
        driver_as(&user)?,
        Path::new("/usr/bin/cairn-desktop"),
        "Cairn",
    )
    .await?;
    let client = &app.client;
    let outcome: TestResult = async {
        wait_for_text(client, "#first-run", "Connect a model to start").await?;
        // Memory search and voice need their models: offered, installed from the registries.
        wait_for_text(client, "#first-run-helpers", "Install them").await?;
        screenshot(client, "package-first-run").await?;
        // Below the fold of the welcome, as a person scrolls to it.
        client
            .execute(
                "document.getElementById('first-run-helpers-install').scrollIntoView({block: 'center'});",
                vec![],
            )
            .await?;
        click(client, "#first-run-helpers-install").await?;
        wait_for_text(client, "#first-run-helpers", "MB").await?;
        screenshot(client, "package-installing-models").await?;
        let gone = "return document.getElementById('first-run-helpers') === null \
                    || document.getElementById('first-run-helpers-error') !== null;";
        let deadline = std::time::Instant::now() + Duration::from_secs(900);
        while client.execute(gone, vec![]).await? != serde_json::json!(true) {
            if std::time::Instant::now() > deadline {
                return Err("the models were not installed within 15 minutes".into());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if let Some(error) = common::text_of(client, "#first-run-helpers-error").await? {
            return Err(format!("installing the models failed: {error}").into());
        }
        for file in [
            "models/all-MiniLM-L6-v2/model.safetensors",
            "models/whisper-ct2/tiny.en/model.bin",
        ] {
            assert!(data.join(file).is_file(), "{file} was not installed");
        }

        // A model server, then the first message.
        click(client, "#first-run-kind-openai").await?;
        let url = client.find(Locator::Id("first-run-url")).await?;
        url.send_keys(&model.base_url).await?;
        click(client, "#first-run-test").await?;
        wait_for_text(client, "#first-run-check", "the server offers").await?;
        click(client, "#first-run-start").await?;
        wait_for_text(client, "#model-pill", "custom/").await?;
        let input = client.find(Locator::Id("composer-input")).await?;
        input.send_keys("Hello there").await?;
        input.send_keys("\u{E007}").await?;
        wait_for_text_within(
            client,
            "#messages",
            "Hello from the installed app.",
            Duration::from_secs(60),
        )
        .await?;
        screenshot(client, "package-first-answer").await?;
        assert!(
            data.join("runtime.json").is_file(),
            "the local API is not announced"
        );
        Ok(())
    }
    .await;
    // Quit as the session does at logout (SIGTERM): the API stops and says so; what was said is
    // kept.
    let _ = Command::new("pkill")
        .args(["-TERM", "-u", &user.user, "-x", "cairn-desktop"])
        .status();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while data.join("runtime.json").exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.close().await;
    outcome?;
    assert!(
        !data.join("runtime.json").exists(),
        "runtime.json was left behind"
    );
    assert!(data.join("config.toml").is_file());
    Ok(())
}
