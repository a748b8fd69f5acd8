//! A definition's whole source: the symbol around each definition, found in the outline of
//! its file (asked of a server for that file), capped by lines.

use squiggle_protocol::navigation::{body_of, enclosing_symbol, Body};
use squiggle_protocol::Location;

use crate::squiggle::Squiggle;

/// At most this many definitions get their body.
const MAX_BODIES: usize = 3;

impl Squiggle {
    /// The source of the symbol defined at each location (the first few), at most `max_lines`
    /// lines each; notes say where only the line itself could be given, and why.
    pub async fn definition_bodies(
        &self,
        locations: &[Location],
        max_lines: u32,
    ) -> (Vec<Body>, Vec<String>) {
        let mut bodies = Vec::new();
        let mut notes = Vec::new();
        for location in locations.iter().take(MAX_BODIES) {
            if let Some(body) = self.body_at(location, max_lines, &mut notes).await {
                bodies.push(body);
            }
        }
        if locations.len() > MAX_BODIES {
            notes.push(format!(
                "the bodies of the first {MAX_BODIES} of {} definitions are shown",
                locations.len()
            ));
        }
        (bodies, notes)
    }

    /// The body of the symbol defined at `location`: from its file's outline, else its line.
    async fn body_at(
        &self,
        location: &Location,
        max_lines: u32,
        notes: &mut Vec<String>,
    ) -> Option<Body> {
        let (path, relative, text) = match self.open_target(location.file.as_ref()).await {
            Ok(found) => found,
            Err(err) => {
                notes.push(format!("no body for {}: {err}", location.file));
                return None;
            }
        };
        let mut symbols = None;
        if let Ok((ready, _)) = self
            .ready_servers(&path, &relative, |p| p.document_symbols)
            .await
        {
            for server in ready {
                let mut said = Vec::new();
                let Some(server_text) = self.open_on(&server, &path, &text, &mut said).await else {
                    continue;
                };
                symbols = self.outline(&server, &path, &relative, &server_text).await;
                if symbols.is_some() {
                    break;
                }
            }
        }
        let symbol = symbols
            .as_deref()
            .and_then(|symbols| enclosing_symbol(symbols, location.line, location.column));
        let (line, end_line) = match symbol {
            Some(symbol) => (symbol.line, symbol.end_line),
            None => {
                notes.push(format!(
                    "no outline of {} holds line {}; its body is that line",
                    location.file, location.line
                ));
                (location.line, location.end_line)
            }
        };
        body_of(&relative, &text, line, end_line, max_lines)
    }
}
