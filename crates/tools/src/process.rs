//! Running a command for a tool: output collected through a temporary file (so a job left running
//! in the background never blocks the call), a timeout, cancellation that kills the whole process
//! group, and the read-back of very large outputs from both ends.

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
    command: Command,
    timeout: Duration,
    ctx: &ToolContext,
    job: Option<&str>,
) -> Result<Finished, std::io::Error> {
    let (mut child, sink) = spawn_into_file(command, ctx)?;
    let group = child.id();
    let ending = tokio::select! {
        status = child.wait() => Ending::Exited(status?),
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = ctx.cancel.cancelled() => Ending::Cancelled,
    };
    let timeout_line = fill(TIMEOUT, &[("timeout", &format!("{}s", timeout.as_secs()))]);
    if let (Ending::TimedOut, Some(label)) = (&ending, job) {
        if let Ok(id) = ctx.jobs.reserve(&ctx.session) {
            // What it printed so far is shown now; the job's output starts after it.
            let read = sink.metadata().map(|m| m.len()).unwrap_or(0);
            let text = read_back(&sink, read);
            ctx.jobs
                .adopt(&ctx.session, id.clone(), label, child, sink, read);
            let mut text = text?;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&timeout_line);
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
    let len = sink.metadata()?.len();
    let mut text = read_back(&sink, len)?;
    let suffix = match ending {
        Ending::Exited(status) if status.success() => None,
        Ending::Exited(status) => Some(match status.code() {
            Some(code) => fill(EXIT_CODE, &[("code", &code.to_string())]),
            None => fill(EXIT_CODE, &[("code", "-1")]),
        }),
        Ending::TimedOut => Some(timeout_line),
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

/// Starts `command` in the working directory, without stdin, in a process group of its own,
/// stdout and stderr going into one temporary file (returned with the child).
pub(crate) fn spawn_into_file(
    mut command: Command,
    ctx: &ToolContext,
) -> std::io::Result<(tokio::process::Child, std::fs::File)> {
    let sink = tempfile::tempfile()?;
    command
        .current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(sink.try_clone()?))
        .stderr(Stdio::from(sink.try_clone()?))
        .process_group(0)
        .kill_on_drop(true);
    Ok((command.spawn()?, sink))
}

/// `len` bytes of `file` from `from`, read without moving its position: a command still running
/// writes at that position (its stdout shares it).
pub(crate) fn read_range(file: &std::fs::File, from: u64, len: u64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0; usize::try_from(len).unwrap_or(usize::MAX)];
    let mut done = 0;
    while done < bytes.len() {
        match file.read_at(&mut bytes[done..], from + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    bytes.truncate(done);
    Ok(bytes)
}

/// The first `len` bytes of the output, or their first and last MiB with the too-large line
/// between.
fn read_back(file: &std::fs::File, len: u64) -> std::io::Result<String> {
    if len <= 2 * READ_BACK {
        return Ok(String::from_utf8_lossy(&read_range(file, 0, len)?).into_owned());
    }
    let head = read_range(file, 0, READ_BACK)?;
    let tail = read_range(file, len - READ_BACK, READ_BACK)?;
    Ok(format!(
        "{}\n{TOO_LARGE}\n{}",
        String::from_utf8_lossy(&head),
        String::from_utf8_lossy(&tail)
    ))
}
