//! The slash commands typed into the composer (`/new`, `/restart`, `/goal`, `/resume`, `/stop`,
//! `/compact`, `/status`, `/model`, `/dream`, `/dream-log`, `/dream-restore`, `/help`): what each
//! does in the workbench and what it says back in the notice above the composer.

use super::bench::Bench;
use super::*;

impl Bench {
    /// Runs `command` with the words after it.
    pub(super) fn command(self, command: SlashCommand, arg: String) {
        self.notice.set(None);
        match command {
            SlashCommand::New => {
                self.current.set(None);
                self.page.set(Page::Tasks);
            }
            SlashCommand::Restart => match self.current.get_untracked() {
                None => self.say(t("Open a task to run its last message again.")),
                Some(id) => {
                    if let Err(why) = self.restart(id) {
                        self.say(why);
                    }
                }
            },
            SlashCommand::Goal => self.goal(arg),
            SlashCommand::Resume => self.resume(arg),
            SlashCommand::Stop => {
                if self.running_now() {
                    self.stop();
                } else {
                    self.say(t("Nothing is running."));
                }
            }
            SlashCommand::Compact => self.compact(),
            SlashCommand::Status => self.notice.set(Some(match self.status.get_untracked() {
                Some(Ok(report)) => present::status_text(&report),
                Some(Err(e)) => e.message,
                None => t("Checking…").into(),
            })),
            SlashCommand::Model if arg.is_empty() => self.list_models(),
            SlashCommand::Model => self.choose_model(arg),
            SlashCommand::Dream => self.dream(arg),
            SlashCommand::DreamLog => self.dream_log(),
            SlashCommand::DreamRestore => self.dream_restore(arg),
            SlashCommand::Help if arg.is_empty() => self.notice.set(Some(slash::help_text())),
            SlashCommand::Help => self
                .notice
                .set(Some(format!("{arg}\n\n{}", slash::help_text()))),
        }
    }

    fn say(self, text: &str) {
        self.notice.set(Some(text.into()));
    }

    /// `/goal [words]`. In a new task, a goal makes the task (empty, titled by its first
    /// message).
    fn goal(self, arg: String) {
        let (session, made) = match self.current_session() {
            Some(session) => (session, None),
            None if arg.trim().is_empty() => {
                self.say(t("There is no goal for this task. Set one: /goal <text>."));
                return;
            }
            None => {
                let (id, session) = self.new_task();
                (session, Some(id))
            }
        };
        spawn_local(async move {
            let said = ipc::task_goal(&session, &arg).await;
            if said.is_err() {
                if let Some(id) = made {
                    self.tasks.update(|all| all.retain(|t| t.id != id));
                    self.current.set(None);
                }
            }
            self.notice.set(Some(match said {
                Ok(said) => said,
                Err(e) => e.message,
            }));
        });
    }

    /// `/resume <words>`: matching episodes; `/resume N`: that episode's context starts a new
    /// task.
    fn resume(self, arg: String) {
        spawn_local(async move {
            let words = arg.trim().to_owned();
            match ipc::resume_search(&words).await {
                // The episode goes along as an attached document: the message stays a line.
                Ok(context) if words.parse::<usize>().is_ok() => {
                    let name = format!("resumed-episode-{words}.md");
                    match ipc::text_attachment(&name, "text/markdown", &context) {
                        Ok(episode) => {
                            self.current.set(None);
                            self.send(
                                t("Let's continue this earlier work where it stopped.").into(),
                                vec![episode],
                            );
                        }
                        Err(e) => self.notice.set(Some(e)),
                    }
                }
                Ok(list) if list.is_empty() => self.notice.set(Some(tf(
                    "Nothing in memory matches \"{words}\".",
                    &[("words", &words)],
                ))),
                Ok(list) => self.notice.set(Some(list)),
                Err(e) => self.notice.set(Some(e.message)),
            }
        });
    }

    /// `/compact`: the history stays in view; the mark shows where it was summarised.
    fn compact(self) {
        let Some(session) = self.current_session() else {
            self.say(t("Open a task to compact it."));
            return;
        };
        self.say(t("Summarising this task's history…"));
        spawn_local(async move {
            self.notice.set(Some(match ipc::compact_task(&session).await {
                Ok(summary) => {
                    let chars = summary.chars().count();
                    self.tasks.update(|all| {
                        if let Some(task) = all.iter_mut().find(|t| t.session == session) {
                            task.messages
                                .push(Entry::new(Message::compaction(summary)));
                        }
                    });
                    tf(
                        "The history is now a summary of {chars} characters; the next message starts from it.",
                        &[("chars", &chars.to_string())],
                    )
                }
                Err(e) => e.message,
            }));
        });
    }

    /// `/model`: what is configured at once; then what each server offers, as it answers.
    /// Cairn's own models are listed too.
    fn list_models(self) {
        let Some(Ok(report)) = self.status.get_untracked() else {
            self.say(t("The status is not known yet."));
            return;
        };
        let notice = self.notice;
        let in_use = report.default_model.clone();
        let configured = present::models_text(&report, &[]);
        notice.set(Some(configured.clone()));
        spawn_local(async move {
            let own = ipc::models_list().await.unwrap_or_default();
            let with_own = |listed: String| {
                crate::settings_models::with_on_device(&listed, &own, in_use.as_deref())
            };
            // Unless the person has moved on to something else meanwhile.
            if notice.get_untracked().as_ref() != Some(&configured) {
                return;
            }
            let shown = Some(with_own(configured));
            notice.set(shown.clone());
            let mut offered = Vec::new();
            for provider in &report.providers {
                if let Ok(test) = ipc::test_provider(&provider.name).await {
                    offered.push((provider.name.clone(), test.models));
                }
            }
            if notice.get_untracked() == shown {
                notice.set(Some(with_own(present::models_text(&report, &offered))));
            }
        });
    }

    /// `/model provider/model`: the chat continues with that model, which becomes the default.
    fn choose_model(self, arg: String) {
        spawn_local(async move {
            self.notice.set(Some(match ipc::set_model(&arg).await {
                Ok(model) => {
                    // The chip, /status and Settings read the config, which now names it.
                    self.refresh();
                    tf(
                        "The chat now uses {model} (now the default).",
                        &[("model", &model)],
                    )
                }
                Err(e) => e.message,
            }));
        });
    }

    /// `/dream [dry]`: the memory consolidates itself now; the notice says what changed.
    fn dream(self, arg: String) {
        let dry = match arg.trim() {
            "" => false,
            "dry" | "dry-run" => true,
            _ => {
                self.say(t(
                    "Type /dream, or /dream dry to only see what would change.",
                ));
                return;
            }
        };
        self.say(t(
            "Dreaming: the memory is being consolidated (it may take minutes)…",
        ));
        spawn_local(async move {
            self.notice.set(Some(match ipc::memory_dream(dry).await {
                Ok(dream) => present::dream_text(&dream, true),
                Err(e) => e.message,
            }));
        });
    }

    /// `/dream-log`: the dreams, newest first.
    fn dream_log(self) {
        spawn_local(async move {
            self.notice.set(Some(match ipc::memory_dream_log().await {
                Ok(log) if log.is_empty() => t("No dreams yet: /dream runs one.").into(),
                Ok(log) => log
                    .iter()
                    .map(|dream| present::dream_text(dream, false))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Err(e) => e.message,
            }));
        });
    }

    /// `/dream-restore N`: asks first (everything since is undone), then with `confirm` restores.
    fn dream_restore(self, arg: String) {
        let mut words = arg.split_whitespace();
        let (Some(id), confirmed) = (
            words.next().and_then(|w| w.parse::<i64>().ok()),
            words.next() == Some("confirm"),
        ) else {
            self.say(t(
                "Type /dream-restore and the number of a dream (see /dream-log).",
            ));
            return;
        };
        if !confirmed {
            self.notice.set(Some(tf(
                "This puts the memory back exactly as it was before dream {id}: that dream, any later one and every memory written since are undone. Type /dream-restore {id} confirm to do it.",
                &[("id", &id.to_string())],
            )));
            return;
        }
        spawn_local(async move {
            self.notice
                .set(Some(match ipc::memory_dream_restore(id).await {
                Ok(restored) => tf(
                    "The memory is back as it was before dream {id}: {changes} changes taken back.",
                    &[
                        ("id", &id.to_string()),
                        ("changes", &restored.changes_undone.to_string()),
                    ],
                ),
                Err(e) => e.message,
            }));
        });
    }
}
