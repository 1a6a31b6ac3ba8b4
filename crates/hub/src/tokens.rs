//! Secrets the hub hands out — device tokens and one-time join codes — and how it keeps them:
//! only their SHA-256.

use sha2::{Digest, Sha256};

use crate::HubError;

/// Crockford's base32 alphabet: no I, L, O or U to misread when a code is typed.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

pub(crate) fn random<const N: usize>() -> Result<[u8; N], HubError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| HubError::Invalid(format!("no randomness on the hub: {e}")))?;
    Ok(bytes)
}

/// A device token: 256 random bits.
pub(crate) fn new_token() -> Result<String, HubError> {
    Ok(format!("chd_{}", hex::encode(random::<32>()?)))
}

/// A join code: 100 random bits in 20 base32 characters, in groups of four.
pub(crate) fn new_code() -> Result<String, HubError> {
    let bytes = random::<20>()?;
    let chars: Vec<char> = bytes
        .iter()
        .map(|b| ALPHABET[(*b & 31) as usize] as char)
        .collect();
    Ok(chars
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-"))
}

/// How a code is compared: case and separators do not matter.
pub(crate) fn normalise_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

pub(crate) fn sha256(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unambiguous_and_compare_loosely() -> Result<(), HubError> {
        let code = new_code()?;
        assert_eq!(code.len(), 24, "{code}");
        assert!(!code.contains(['I', 'L', 'O', 'U']));
        assert_eq!(normalise_code(&code.to_lowercase()), normalise_code(&code));
        assert_ne!(new_code()?, code);
        assert!(new_token()?.starts_with("chd_"));
        Ok(())
    }
}
