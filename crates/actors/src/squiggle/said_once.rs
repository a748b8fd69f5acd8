//! What a session has been told about its servers already: a server that is unavailable (not
//! installed, or it does not run) is news once per session, a broken one or one that did not
//! answer in time every time. The MCP tools and `serve` navigation share it.

use std::collections::HashSet;
use std::sync::Mutex;

use squiggle_protocol::{ServerReport, ServerState};

use super::Squiggle;
use crate::check::CheckResult;
use crate::lock::lock;

/// The servers said to be unavailable this session.
#[derive(Debug, Default)]
pub(crate) struct SaidOnce(Mutex<HashSet<String>>);

impl SaidOnce {
    /// Whether a server's problem is news, remembering an unavailable one as said.
    fn is_news(&self, server: &ServerReport) -> bool {
        server.status != ServerState::Unavailable || lock(&self.0).insert(server.id.clone())
    }

    /// The lines of `missing` (one per server that gave no final answer, each starting with
    /// its id and a colon) that are news: those of servers already said to be unavailable this
    /// session are left out.
    pub(crate) fn news(&self, servers: &[ServerReport], missing: &[String]) -> Vec<String> {
        let said_before: Vec<String> = servers
            .iter()
            .filter(|server| !self.is_news(server))
            .map(|server| format!("{}:", server.id))
            .collect();
        missing
            .iter()
            .filter(|line| !said_before.iter().any(|id| line.starts_with(id)))
            .cloned()
            .collect()
    }
}

impl Squiggle {
    /// What a check's outcome says about servers that gave no final answer, once per session
    /// for a server that is unavailable (so it is not repeated in every answer), every time
    /// for one that is broken or late.
    pub fn missing_news(&self, check: &CheckResult) -> Vec<String> {
        self.inner
            .said_once
            .news(&check.servers, check.outcome().missing())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(id: &str, status: ServerState) -> ServerReport {
        ServerReport {
            id: id.to_string(),
            root: ".".to_string(),
            status,
            reason: None,
            basis: None,
            required: false,
        }
    }

    #[test]
    fn an_unavailable_server_is_news_once_a_broken_one_every_time() {
        let said = SaidOnce::default();
        let servers = [
            server("ruff", ServerState::Unavailable),
            server("pyright", ServerState::Broken),
            server("ty", ServerState::Active),
        ];
        let missing = [
            "ruff: not installed".to_string(),
            "pyright: crashed".to_string(),
        ];
        assert_eq!(said.news(&servers, &missing), missing.to_vec());
        assert_eq!(
            said.news(&servers, &missing),
            vec!["pyright: crashed".to_string()]
        );
        assert_eq!(
            said.news(&servers, &missing),
            vec!["pyright: crashed".to_string()]
        );
    }

    #[test]
    fn each_unavailable_server_is_said_once_on_its_own() {
        let said = SaidOnce::default();
        let ruff = [server("ruff", ServerState::Unavailable)];
        let ty = [server("ty", ServerState::Unavailable)];
        assert_eq!(said.news(&ruff, &["ruff: gone".into()]).len(), 1);
        assert_eq!(said.news(&ty, &["ty: gone".into()]).len(), 1);
        assert!(said.news(&ruff, &["ruff: gone".into()]).is_empty());
    }

    #[test]
    fn a_server_that_answered_leaves_the_lines_alone() {
        let said = SaidOnce::default();
        let active = [server("ty", ServerState::Active)];
        let missing = ["late: no answer within 10 s".to_string()];
        assert_eq!(said.news(&active, &missing), missing.to_vec());
        assert!(said.news(&active, &[]).is_empty());
    }
}
