//! Where in the config text a value was written: byte offsets become line-numbered errors that
//! name the file; `${ENV_NAME}` references are expanded and `provider/model` references checked
//! there, so their errors point at the line too.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use crate::provider::{ProviderConfig, BUILTIN_LOCAL_PROVIDER};
use crate::ConfigError;

/// Turns byte offsets in the config text into line-numbered errors.
pub(crate) struct Locator<'a> {
    text: &'a str,
    path: &'a Path,
}

impl<'a> Locator<'a> {
    /// A locator for `text`, read from `path`.
    pub(crate) fn new(text: &'a str, path: &'a Path) -> Self {
        Self { text, path }
    }

    fn line(&self, offset: usize) -> usize {
        crate::errors::line_at(self.text, offset)
    }

    /// The line of the table `[key]` (1 when it is written some other way).
    pub(crate) fn line_of_key(&self, key: &str) -> usize {
        let header = format!("[{key}]");
        self.text
            .find(&header)
            .map_or(1, |offset| self.line(offset))
    }

    pub(crate) fn error_at_line(&self, line: usize, message: String) -> ConfigError {
        ConfigError::Invalid {
            file: PathBuf::from(self.path),
            line,
            message,
        }
    }

    pub(crate) fn error(&self, span: Range<usize>, message: String) -> ConfigError {
        self.error_at_line(self.line(span.start), message)
    }

    /// Replaces each `${NAME}` with the environment variable's value; an unset variable is an error.
    pub(crate) fn expand(
        &self,
        value: &Spanned<String>,
        key: &str,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<String, ConfigError> {
        let mut out = String::new();
        let mut rest = value.get_ref().as_str();
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(self.error(
                    value.span(),
                    format!("`{key}` has an unclosed ${{…}} reference"),
                ));
            };
            let name = &after[..end];
            let valid_name =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid_name {
                return Err(self.error(
                    value.span(),
                    format!("`{key}` has a ${{…}} reference that is not an environment variable name (letters, digits and _)"),
                ));
            }
            match env(name) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(self.error(
                        value.span(),
                        format!("`{key}` refers to ${{{name}}}, but the environment variable {name} is not set"),
                    ))
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    pub(crate) fn model_ref(
        &self,
        model: &Spanned<String>,
        key: &str,
        providers: &BTreeMap<String, ProviderConfig>,
    ) -> Result<(String, String), ConfigError> {
        let value = model.get_ref();
        let Some((provider, id)) = value
            .split_once('/')
            .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        else {
            return Err(self.error(
                model.span(),
                format!(
                    "`{key}` must be written provider/model (e.g. openai/gpt-4o), got {value:?}"
                ),
            ));
        };
        if !providers.contains_key(provider) && provider != BUILTIN_LOCAL_PROVIDER {
            let known: Vec<&str> = providers.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "no providers are configured; add a [providers.NAME] table".to_owned()
            } else {
                format!("configured providers: {}", known.join(", "))
            };
            return Err(self.error(
                model.span(),
                format!("`{key}` names provider {provider:?}, which is not configured ({known})"),
            ));
        }
        Ok((provider.to_owned(), id.to_owned()))
    }
}
