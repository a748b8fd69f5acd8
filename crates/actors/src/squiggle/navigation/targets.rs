//! Position questions answered with locations: definitions, references, implementations and
//! type definitions, each server's answer turned into locations with their line of source.

use std::path::Path;

use squiggle_protocol::navigation::definition_targets;
use squiggle_protocol::Location;

use super::{dedup, Answer, Kind, NavError, Target};
use crate::server::navigate::NavAnswer;
use crate::squiggle::Squiggle;

impl Squiggle {
    /// Where the symbol at `target` in `file` is implemented: the classes that implement an
    /// interface, the overrides of a method.
    pub async fn implementation(
        &self,
        file: impl AsRef<Path>,
        target: Target,
    ) -> Result<Answer<Vec<Location>>, NavError> {
        self.located_at(file.as_ref(), &target, Kind::Implementation)
            .await
    }

    /// Where the type of the symbol at `target` in `file` is defined.
    pub async fn type_definition(
        &self,
        file: impl AsRef<Path>,
        target: Target,
    ) -> Result<Answer<Vec<Location>>, NavError> {
        self.located_at(file.as_ref(), &target, Kind::TypeDefinition)
            .await
    }

    /// The locations the servers answer a question of `kind` with (definition, references,
    /// implementation or type definition), each once.
    pub(super) async fn located_at(
        &self,
        file: &Path,
        target: &Target,
        kind: Kind,
    ) -> Result<Answer<Vec<Location>>, NavError> {
        let asked = self.ask_at(file, target, kind).await?;
        let mut locations = Vec::new();
        for (encoding, answer) in asked.answers {
            let targets = match answer {
                NavAnswer::Definition(Some(response))
                | NavAnswer::Implementation(Some(response))
                | NavAnswer::TypeDefinition(Some(response)) => definition_targets(&response),
                NavAnswer::References(Some(found)) => {
                    found.into_iter().map(|l| (l.uri, l.range)).collect()
                }
                _ => continue,
            };
            locations.extend(self.locations(targets, encoding).await);
        }
        Ok(Answer {
            items: dedup(locations),
            position: asked.position,
            subject: asked.subject,
            notes: asked.notes,
        })
    }
}
