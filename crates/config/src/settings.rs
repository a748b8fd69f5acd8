//! Answers to `workspace/configuration`: a section of a server's `settings`.

use serde_json::Value;

/// The value at a dotted `section` of `settings` (`python.analysis` -> settings.python.analysis);
/// the whole settings for no section; null when absent.
pub fn settings_section(settings: Option<&Value>, section: Option<&str>) -> Value {
    let Some(settings) = settings else {
        return Value::Null;
    };
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    section
        .split('.')
        .try_fold(settings, |value, key| value.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_sections_walk_into_nested_objects() {
        let settings = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        assert_eq!(
            settings_section(Some(&settings), Some("python.analysis")),
            json!({"typeCheckingMode": "strict"})
        );
        assert_eq!(
            settings_section(Some(&settings), Some("python.analysis.typeCheckingMode")),
            json!("strict")
        );
    }

    #[test]
    fn absent_sections_and_absent_settings_are_null() {
        let settings = json!({"python": {}});
        assert_eq!(
            settings_section(Some(&settings), Some("python.analysis")),
            Value::Null
        );
        assert_eq!(settings_section(Some(&settings), Some("rust")), Value::Null);
        assert_eq!(settings_section(None, Some("python")), Value::Null);
    }

    #[test]
    fn no_section_means_all_settings() {
        let settings = json!({"a": 1});
        assert_eq!(settings_section(Some(&settings), None), settings);
        assert_eq!(settings_section(Some(&settings), Some("")), settings);
    }
}
