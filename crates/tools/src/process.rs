//! Running a command for a tool: output collected through a temporary file (so a job left running
//! in the background never blocks the call), a timeout, cancellation that kills the whole process
//! group, and the read-back of very large outputs from both ends.

use std::io::{Read, Seek, SeekFrom};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::texts::{fill, CANCELLED, EXIT_CODE, JOB_MOVED, TIMEOUT, TOO_LARGE};
use crate::ToolContext;

/// Bytes read back from each end of an output too large to read whole.
const READ_BACK: u64 = 1 << 20;

/// How a command ended.
pub struct Finished {
    /// stdout and stderr merged, with any timeout/cancel/exit-code line appended.
    pub text: String,
    /// Not a clean exit 0.
    pub failed: bool,
}

/// Runs `command` (its stdout and stderr into one temporary file) until it exits, `timeout`
/// passes, or the turn is cancelled. `Err` = it could not be started.
pub async fn run(
    command: Command,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Finished, std::io::Error> {
    run_or_keep(command, timeout, ctx, None).await
}

/// [`run`], except that a command still running at `timeout` goes on as a background job of the
/// session labelled `job` (when given, and when the session may start one more).
pub async fn run_or_keep(
    mut command: Command,
    timeout: Duration,
    ctx: &ToolContext,
    job: Option<&str>,
) -> Result<Finished, std::io::Error> {
    let mut sink = tempfile::tempfile()?;
    command
        .current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(sink.try_clone()?))
        .stderr(Stdio::from(sink.try_clone()?))
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let group = child.id();
    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status?),
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = ctx.cancel.cancelled() => Ending::Cancelled,
    };
    if let (Ending::TimedOut, Some(label)) = (&ending, job) {
        if let Ok(id) = ctx.jobs.reserve(&ctx.session) {
            let mut text = read_back(&mut sink)?;
            let read = sink.stream_position()?;
            ctx.jobs
                .adopt(&ctx.session, id.clone(), label, child, sink, read);
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            let timeout = format!("{}s", timeout.as_secs());
            text.push_str(&fill(TIMEOUT, &[("timeout", &timeout)]));
            text.push('\n');
            text.push_str(&fill(JOB_MOVED, &[("id", &id)]));
            return Ok(Finished {
                text: ctx.truncate(text),
                failed: true,
            });
        }
    }
    if !matches!(ending, Ending::Exited(_)) {
        kill_group(group);
        let _ = child.wait().await;
    }
    let mut text = read_back(&mut sink)?;
    let suffix = match ending {
        Ending::Exited(status) if status.success() => None,
        Ending::Exited(status) => Some(match status.code() {
            Some(code) => fill(EXIT_CODE, &[("code", &code.to_string())]),
            None => fill(EXIT_CODE, &[("code", "-1")]),
        }),
        Ending::TimedOut => Some(fill(
            TIMEOUT,
            &[("timeout", &format!("{}s", timeout.as_secs()))],
        )),
        Ending::Cancelled => Some(CANCELLED.to_owned()),
    };
    let failed = suffix.is_some();
    if let Some(suffix) = suffix {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&suffix);
    }
    Ok(Finished {
        text: ctx.truncate(text),
        failed,
    })
}

enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

/// Kills the process group `group` leads (what a command started goes with it).
pub(crate) fn kill_group(group: Option<u32>) {
    let pid = group
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The whole output, or its first and last MiB with the too-large line between.
fn read_back(file: &mut std::fs::File) -> std::io::Result<String> {
    let len = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    if len <= 2 * READ_BACK {
        file.read_to_end(&mut bytes)?;
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    file.take(READ_BACK).read_to_end(&mut bytes)?;
    let mut tail = Vec::new();
    file.seek(SeekFrom::End(-(READ_BACK as i64)))?;
    file.read_to_end(&mut tail)?;
    Ok(format!(
        "{}\n{TOO_LARGE}\n{}",
        String::from_utf8_lossy(&bytes),
        String::from_utf8_lossy(&tail)
    ))
}
