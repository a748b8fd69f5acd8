//! The answers of `squiggle serve`'s check methods: `lsp/checkFile` (diagnostics only, as the
//! contract has it), `squiggle/checkFile` (with whether the file was checked) and
//! `squiggle/feedback`; each from one check's `CheckResult`.

use squiggle_actors::{CheckResult, Outcome, Scope, Severity, Squiggle};
use squiggle_protocol::not_checked_section;
use squiggle_protocol::service::{
    service_diagnostics, CheckFileResult, FeedbackResult, ServiceDiagnostic,
};

/// Why a file is not checked when its request was cancelled before the servers answered.
const CANCELLED: &str = "the request was cancelled before its servers answered";

/// The checks of one service, at its configured severities.
pub struct Checks<'a> {
    /// The runtime.
    pub squiggle: &'a Squiggle,
    /// The severities reported.
    pub severities: &'a [Severity],
}

impl Checks<'_> {
    /// `lsp/checkFile`: the file's diagnostics; after a cancel (`hurry`), those known so far.
    pub async fn diagnostics(
        &self,
        file_path: &str,
        text: Option<String>,
        hurry: bool,
    ) -> Vec<ServiceDiagnostic> {
        if hurry {
            return self.known(file_path).await;
        }
        let check = self.squiggle.check_file(file_path, text).await;
        service_diagnostics(check.diagnostics, self.severities)
    }

    /// `squiggle/checkFile`: the diagnostics, the outcome and its reason, and the servers;
    /// after a cancel, the diagnostics known so far of a file that is not checked.
    pub async fn check_file(
        &self,
        file_path: &str,
        text: Option<String>,
        hurry: bool,
    ) -> CheckFileResult {
        if hurry {
            let outcome = Outcome::not_checked(CANCELLED);
            return CheckFileResult {
                diagnostics: self.known(file_path).await,
                outcome: outcome.kind(false),
                reason: outcome.reason().map(String::from),
                servers: Vec::new(),
            };
        }
        let check = self.squiggle.check_file(file_path, text).await;
        let outcome = check.outcome();
        let CheckResult {
            diagnostics,
            servers,
            ..
        } = check;
        let diagnostics = service_diagnostics(diagnostics, self.severities);
        CheckFileResult {
            outcome: outcome.kind(!diagnostics.is_empty()),
            reason: outcome.reason().map(String::from),
            diagnostics,
            servers,
        }
    }

    /// `squiggle/feedback`: the text an edit tool appends (a not-checked line included), the
    /// diagnostics and the outcome; after a cancel, the line for a file that is not checked.
    pub async fn feedback(
        &self,
        file_path: &str,
        text: Option<String>,
        scope: Scope,
        hurry: bool,
    ) -> FeedbackResult {
        if hurry {
            let outcome = Outcome::not_checked(CANCELLED);
            let file = self.squiggle.relative_path(file_path);
            return FeedbackResult {
                text: not_checked_section(&file, CANCELLED),
                diagnostics: Vec::new(),
                outcome: outcome.kind(false),
                reason: outcome.reason().map(String::from),
            };
        }
        let feedback = self.squiggle.feedback(file_path, text, scope, None).await;
        let outcome = feedback.check.outcome();
        let diagnostics = service_diagnostics(feedback.check.diagnostics, self.severities);
        FeedbackResult {
            text: feedback.text,
            outcome: outcome.kind(!diagnostics.is_empty()),
            reason: outcome.reason().map(String::from),
            diagnostics,
        }
    }

    /// The diagnostics the store holds for a file now, without checking it.
    async fn known(&self, file_path: &str) -> Vec<ServiceDiagnostic> {
        let file = self.squiggle.relative_path(file_path);
        let known = self
            .squiggle
            .diagnostics()
            .await
            .remove(&file)
            .unwrap_or_default();
        service_diagnostics(known, self.severities)
    }
}
