//! Settings' diagnostics: a redacted report to attach to a bug, written on this machine.

use super::*;

#[component]
pub(super) fn DiagnosticsSection(page: Page) -> impl IntoView {
    let Page {
        diagnostics_notice, ..
    } = page;

    view! {
    <section class="set-section" aria-labelledby="set-diagnostics-title">
        <h2 id="set-diagnostics-title">{t("Diagnostics")}</h2>
        <p class="set-muted">
            {t("A report to attach to a bug: the version, the status, your config with its keys removed, the sources and the memory's health. Nothing is sent anywhere.")}
        </p>
        <div class="set-actions">
            <button
                class="secondary"
                id="diagnostics-export"
                on:click=move |_| {
                    diagnostics_notice.set(Some(Notice::Done(t("Writing the report…").into())));
                    spawn_local(async move {
                        let answer = ipc::export_diagnostics().await;
                        diagnostics_notice.set(Some(match answer {
                            Ok(path) => Notice::Done(tf("Report written to {path}", &[("path", &path)])),
                            Err(e) => Notice::Failed(e.message),
                        }));
                    });
                }
            >
                {t("Export a diagnostic report")}
            </button>
        </div>
        {notice_view(diagnostics_notice, "diagnostics-path")}
    </section>
    }
}
