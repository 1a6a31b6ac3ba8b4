//! A real PostgreSQL for tests: a throwaway cluster in a temp dir (`initdb` + `pg_ctl`), reached
//! only through a Unix socket in that dir, stopped and removed on drop. As root it runs as the
//! `postgres` user (PostgreSQL refuses to run as root). The setup installs PostgreSQL (Debian's
//! `postgresql` package); without it the fixture fails with what to install.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running cluster; each test takes its own database with [`Postgres::database`].
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    /// The user the server runs as, when not the current one.
    run_as: Option<String>,
    user: String,
}

fn bin_dir() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("CAIRN_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "PostgreSQL is not installed: `sudo apt-get install postgresql` (or set CAIRN_PG_BIN to its bin dir)"
            .to_owned()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

impl Postgres {
    /// Starts a new cluster (about a second).
    pub fn start() -> Result<Self, String> {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let bin = bin_dir()?;
        let dir = std::env::temp_dir().join(format!(
            "cairn-pg-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sock")).map_err(|e| e.to_string())?;
        let run_as = is_root().then(|| "postgres".to_owned());
        if let Some(user) = &run_as {
            run(Command::new("chown").args(["-R", user]).arg(&dir))?;
        }
        let user = match &run_as {
            Some(user) => user.clone(),
            None => std::env::var("USER").unwrap_or_else(|_| "postgres".into()),
        };
        let postgres = Self {
            dir,
            bin,
            run_as,
            user,
        };
        postgres.as_server(&postgres.bin.join("initdb"), |c| {
            c.args(["-A", "trust", "--no-sync", "-E", "UTF8", "-U"])
                .arg(&postgres.user)
                .arg("-D")
                .arg(postgres.dir.join("data"));
        })?;
        postgres.as_server(&postgres.bin.join("pg_ctl"), |c| {
            c.arg("-D")
                .arg(postgres.dir.join("data"))
                .arg("-l")
                .arg(postgres.dir.join("log"))
                .arg("-o")
                .arg(format!(
                    "-c listen_addresses='' -c unix_socket_directories='{}' -c fsync=off \
                     -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                    postgres.socket().display()
                ))
                .args(["-w", "start"]);
        })?;
        postgres.watch_over(std::process::id())?;
        Ok(postgres)
    }

    /// Stops the server and removes its dir when process `pid` ends however it ends (a test
    /// killed by a timeout runs no `Drop`).
    fn watch_over(&self, pid: u32) -> Result<(), String> {
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             {runas}'{pg_ctl}' -D '{data}' -m immediate stop >/dev/null 2>&1; rm -rf '{dir}'",
            runas = self
                .run_as
                .as_ref()
                .map(|user| format!("runuser -u {user} -- "))
                .unwrap_or_default(),
            pg_ctl = self.bin.join("pg_ctl").display(),
            data = self.dir.join("data").display(),
            dir = self.dir.display(),
        );
        Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map(|_| ())
            .map_err(|e| format!("the watchdog of the test's PostgreSQL: {e}"))
    }

    fn as_server(&self, program: &Path, args: impl FnOnce(&mut Command)) -> Result<(), String> {
        let mut command = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        args(&mut command);
        run(&mut command)
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("sock")
    }

    /// Creates database `name` and returns its address (a libpq keyword string).
    pub fn database(&self, name: &str) -> Result<String, String> {
        let mut command = Command::new(self.bin.join("createdb"));
        command
            .arg("-h")
            .arg(self.socket())
            .args(["-U", &self.user, name]);
        run(&mut command)?;
        Ok(self.url(name))
    }

    /// The address of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "host={} user={} dbname={name}",
            self.socket().display(),
            self.user
        )
    }

    /// Runs `sql` (statements, each on its own) with psql on database `name`; returns what they
    /// printed (unaligned, no headers, no command tags).
    pub fn psql(&self, name: &str, sql: &str) -> Result<String, String> {
        use std::io::Write;
        let mut child = Command::new(self.bin.join("psql"))
            .arg("-h")
            .arg(self.socket())
            .args([
                "-U",
                &self.user,
                "-d",
                name,
                "-qAt",
                "-v",
                "ON_ERROR_STOP=1",
                "-f",
                "-",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(sql.as_bytes()).map_err(|e| e.to_string())?;
        }
        let output = child.wait_with_output().map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Dumps database `name` as SQL (`pg_dump`), as an operator's backup would hold it.
    pub fn dump(&self, name: &str) -> Result<Vec<u8>, String> {
        let output = Command::new(self.bin.join("pg_dump"))
            .arg("-h")
            .arg(self.socket())
            .args(["-U", &self.user, name])
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(output.stdout)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.as_server(&self.bin.join("pg_ctl"), |c| {
            c.arg("-D").arg(&data).args(["-m", "immediate", "stop"]);
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
