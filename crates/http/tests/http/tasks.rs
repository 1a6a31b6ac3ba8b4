//! Tasks over a real server on loopback: a client follows `GET /api/v1/events` while it creates a
//! task, answers an approval, and reads the task back.

use std::sync::Arc;
use std::time::Duration;

use cairn_api::chat::Chat;
use cairn_api::Cairn;
use cairn_config::Home;
use cairn_test_support::{text_reply, tool_call_reply, tool_calls_reply, MockServer};
use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The events stream as `(event, data)` pairs, read as they come.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(
        client: &reqwest::Client,
        api: &str,
        token: &str,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let response = client
            .get(format!("{api}/api/v1/events"))
            .bearer_auth(token)
            .send()
            .await?;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        Ok(Self {
            response,
            buffer: String::new(),
        })
    }

    /// The next event of `task` (keep-alives and other tasks' events skipped).
    async fn next(&mut self, task: &str) -> Result<(String, Value), Box<dyn std::error::Error>> {
        self.next_where(|_, data| data["task"] == task).await
    }

    /// The next event that `wanted` accepts.
    async fn next_where(
        &mut self,
        wanted: impl Fn(&str, &Value) -> bool,
    ) -> Result<(String, Value), Box<dyn std::error::Error>> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let mut kind = String::new();
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(k) = line.strip_prefix("event: ") {
                        kind = k.to_owned();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.push_str(d);
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data: Value = serde_json::from_str(&data)?;
                if wanted(&kind, &data) {
                    return Ok((kind, data));
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.response.chunk())
                .await??
                .ok_or("the event stream ended")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Events of `task` up to (and including) the first of kind `last`.
    async fn until(
        &mut self,
        task: &str,
        last: &str,
    ) -> Result<Vec<(String, Value)>, Box<dyn std::error::Error>> {
        let mut seen = Vec::new();
        loop {
            let event = self.next(task).await?;
            let done = event.0 == last;
            seen.push(event);
            if done {
                return Ok(seen);
            }
        }
    }
}

/// A task created over the API with `message`; its id.
async fn create_task(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    message: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let created: Value = client
        .post(format!("{url}/api/v1/tasks"))
        .bearer_auth(token)
        .json(&json!({ "message": message }))
        .send()
        .await?
        .json()
        .await?;
    Ok(created["task"].as_str().ok_or("no task id")?.to_owned())
}

async fn server(
    replies: Vec<cairn_test_support::Reply>,
    yolo: bool,
) -> Result<(MockServer, tempfile::TempDir, cairn_http::RunningApi), Box<dyn std::error::Error>> {
    server_with(replies, yolo, "").await
}

/// [`server`] with `more` appended to its config.
async fn server_with(
    replies: Vec<cairn_test_support::Reply>,
    yolo: bool,
    more: &str,
) -> Result<(MockServer, tempfile::TempDir, cairn_http::RunningApi), Box<dyn std::error::Error>> {
    let model = MockServer::start(replies).await?;
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[agent]\nmodel = \"mock/m1\"\nyolo = {yolo}\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\n{more}",
            model.base_url
        ),
    )?;
    let cairn = Cairn::with_env(Home::at(dir.path()), Arc::new(|_: &str| None));
    let chat = Arc::new(Chat::new(cairn.clone(), dir.path().to_path_buf()));
    let api = cairn_http::serve(cairn, None, chat).await?;
    Ok((model, dir, api))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_over_the_api_is_followed_to_its_answer() -> TestResult {
    let (_model, _dir, api) = server(vec![text_reply("Hello from Cairn.")], true).await?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let mut events = Events::open(&client, &url, &token).await?;

    let created = client
        .post(format!("{url}/api/v1/tasks"))
        .bearer_auth(&token)
        .json(&json!({"message": "Say hello"}))
        .send()
        .await?;
    assert_eq!(created.status(), 201);
    let task = created.json::<Value>().await?["task"]
        .as_str()
        .ok_or("no task id")?
        .to_owned();

    let seen = events.until(&task, "done").await?;
    let text: String = seen
        .iter()
        .filter(|(k, _)| k == "text")
        .filter_map(|(_, d)| d["text"].as_str())
        .collect();
    assert_eq!(text, "Hello from Cairn.");
    assert!(seen
        .iter()
        .all(|(kind, data)| data["kind"] == kind.as_str()));

    let read: Value = client
        .get(format!("{url}/api/v1/tasks/{task}"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(read["summary"]["title"], "Say hello", "{read}");
    assert_eq!(
        read["transcript"].as_array().map(Vec::len),
        Some(2),
        "{read}"
    );
    let listed: Value = client
        .get(format!("{url}/api/v1/tasks"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert!(
        listed
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["session"] == task.as_str()),
        "{listed}"
    );

    // Without the token, neither the tasks nor their events.
    assert_eq!(
        client
            .get(format!("{url}/api/v1/events"))
            .send()
            .await?
            .status(),
        401
    );
    assert_eq!(
        client
            .post(format!("{url}/api/v1/tasks"))
            .json(&json!({"message": "x"}))
            .send()
            .await?
            .status(),
        401
    );
    api.shutdown().await?;
    Ok(())
}

/// A task created with a folder works there (its commands run there, the folder is kept with
/// it); a folder that is not there is refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_with_a_folder_works_there() -> TestResult {
    let (_model, dir, api) = server(
        vec![
            tool_call_reply("c1", "bash", json!({"command": "pwd > here.txt"})),
            text_reply("Here."),
        ],
        true,
    )
    .await?;
    let project = tempfile::tempdir()?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let mut events = Events::open(&client, &url, &token).await?;
    let refused = client
        .post(format!("{url}/api/v1/tasks"))
        .bearer_auth(&token)
        .json(&json!({"message": "x", "folder": project.path().join("missing")}))
        .send()
        .await?;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await?.contains("There is no folder"));

    let created: Value = client
        .post(format!("{url}/api/v1/tasks"))
        .bearer_auth(&token)
        .json(&json!({"message": "Where are you?", "folder": project.path()}))
        .send()
        .await?
        .json()
        .await?;
    let task = created["task"].as_str().ok_or("no task id")?.to_owned();
    events.until(&task, "done").await?;
    let here = std::fs::read_to_string(project.path().join("here.txt"))?;
    let real = project.path().canonicalize()?;
    assert_eq!(std::path::Path::new(here.trim()).canonicalize()?, real);
    assert!(!dir.path().join("here.txt").exists());
    let read: Value = client
        .get(format!("{url}/api/v1/tasks/{task}"))
        .bearer_auth(&token)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        read["summary"]["folder"],
        real.display().to_string(),
        "{read}"
    );
    api.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_answered_over_the_api() -> TestResult {
    let (_model, dir, api) = server(
        vec![
            tool_call_reply("c1", "bash", json!({"command": "touch refused.txt"})),
            text_reply("I did not run it."),
        ],
        false,
    )
    .await?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let mut events = Events::open(&client, &url, &token).await?;
    let task = create_task(&client, &url, &token, "make a file").await?;

    let seen = events.until(&task, "approval").await?;
    let request = seen
        .last()
        .and_then(|(_, d)| d["request"].as_u64())
        .ok_or("no request")?;
    let refused = client
        .post(format!("{url}/api/v1/approvals/{request}"))
        .bearer_auth(&token)
        .json(&json!({"allow": false}))
        .send()
        .await?;
    assert_eq!(refused.status(), 204);
    let rest = events.until(&task, "done").await?;
    let outputs: Vec<&str> = rest
        .iter()
        .filter(|(k, _)| k == "tool_done")
        .filter_map(|(_, d)| d["output"].as_str())
        .collect();
    assert!(
        outputs
            .iter()
            .any(|o| o.contains("[command rejected by the user]")),
        "{outputs:?}"
    );
    assert!(!dir.path().join("refused.txt").exists());
    api.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_reports_its_progress_on_the_event_stream() -> TestResult {
    let projects = tempfile::tempdir()?;
    let folder = projects.path().join("-tmp");
    std::fs::create_dir_all(&folder)?;
    let eval = std::env::var_os("CAIRN_EVAL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval")
        });
    std::fs::copy(
        eval.join("transcripts/claude-code/agent-sessions__stage0_claude_small.jsonl"),
        folder.join("ses_stage0_small.jsonl"),
    )?;
    let more = format!(
        "\n[sources.claude-code]\npath = {:?}\n",
        projects.path().display().to_string()
    );
    let (_model, _dir, api) = server_with(Vec::new(), true, &more).await?;
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let mut events = Events::open(&client, &url, &token).await?;

    let scan = client
        .post(format!("{url}/api/v1/sources/scan"))
        .bearer_auth(&token)
        .json(&json!({"source": "claude-code"}))
        .send()
        .await?;
    assert_eq!(scan.status(), 200);
    let reports: Value = scan.json().await?;

    let is_scan = |kind: &str, _: &Value| kind == "scan";
    let (_, started) = events.next_where(is_scan).await?;
    assert_eq!(
        started,
        json!({"event": "source_started", "source": "claude-code", "files": 1})
    );
    let (_, file) = events.next_where(is_scan).await?;
    assert_eq!(file["event"], "file", "{file}");
    assert_eq!(
        (file["done"].as_u64(), file["files"].as_u64()),
        (Some(1), Some(1))
    );
    let (_, done) = events.next_where(is_scan).await?;
    assert_eq!(done["event"], "source_done", "{done}");
    assert_eq!(
        done["report"], reports[0],
        "the stream and the answer agree"
    );
    assert!(done["report"]["turns_added"].as_u64() > Some(0), "{done}");
    api.shutdown().await?;
    Ok(())
}

/// A subagent and two background commands run while the person keeps talking; each wakes the
/// task when it ends, in the order they end, and a client of the event stream sees each note and
/// the turn it opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_wake_their_task_in_order_while_the_person_talks() -> TestResult {
    let (model, _dir, api) = server(
        vec![
            tool_calls_reply(
                "Starting both.",
                &[
                    (
                        "c1",
                        "bash",
                        json!({"command": "sleep 1; echo first", "background": true}),
                    ),
                    (
                        "c2",
                        "bash",
                        json!({"command": "sleep 2; echo second", "background": true}),
                    ),
                ],
            ),
            tool_call_reply(
                "c3",
                "task",
                json!({"description": "count to three", "prompt": "SUBAGENT: count to three, slowly", "background": true}),
            ),
            text_reply("All three are running."),
            text_reply("4"),
            text_reply("The first one is done."),
            text_reply("The second one is done."),
            text_reply("The subagent is done."),
        ],
        true,
    )
    .await?;
    model.route(
        "SUBAGENT",
        vec![
            tool_call_reply("s1", "bash", json!({"command": "sleep 4"})),
            text_reply("One, two, three."),
        ],
    );
    let (url, token) = (api.info().api_url.clone(), api.info().token.clone());
    let client = reqwest::Client::builder().no_proxy().build()?;
    let mut events = Events::open(&client, &url, &token).await?;
    let task = create_task(&client, &url, &token, "Start both builds and a count").await?;
    events.until(&task, "done").await?;

    // The person goes on talking while all three run.
    let sent = client
        .post(format!("{url}/api/v1/tasks/{task}/messages"))
        .bearer_auth(&token)
        .json(&json!({"message": "What is 2+2?"}))
        .send()
        .await?;
    assert!(sent.status().is_success(), "{}", sent.status());
    let answer = events.until(&task, "done").await?;
    assert!(
        answer.iter().all(|(kind, _)| kind != "job_note"),
        "{answer:?}"
    );

    for (first_line, reply) in [
        (
            "[A background job you started has finished:]\njob1 (sleep 1; echo first) exited with code 0 after",
            "The first one is done.",
        ),
        (
            "[A background job you started has finished:]\njob2 (sleep 2; echo second) exited with code 0 after",
            "The second one is done.",
        ),
        (
            "[A subagent you started has finished:]\njob3 (subagent: count to three) finished after",
            "The subagent is done.",
        ),
    ] {
        let woke = events.until(&task, "done").await?;
        let (kind, note) = woke.first().ok_or("no event")?;
        assert_eq!(kind, "job_note", "{woke:?}");
        let text = note["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(first_line), "{text}");
        let said: String = woke
            .iter()
            .filter(|(k, _)| k == "text")
            .filter_map(|(_, d)| d["text"].as_str())
            .collect();
        assert_eq!(said, reply);
    }
    // Its report reached the task's model with its note.
    let requests = model.requests();
    assert!(requests
        .last()
        .is_some_and(|r| r.to_string().contains("Its report:\\nOne, two, three.")));
    assert_eq!(requests.len(), 9);
    api.shutdown().await?;
    Ok(())
}
