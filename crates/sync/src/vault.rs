//! The personal vault's key and what it seals. A record's body is sealed with
//! XChaCha20-Poly1305 under the vault key, a random 24-byte nonce each, and bound to where it sits
//! (space, device, index) so the hub cannot move it to another place in a log. The key leaves a
//! device only sealed by a pairing secret that never reaches the hub, or as the recovery key the
//! person writes down.

use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

use crate::SyncError;

/// The sealed format's first byte.
const FORMAT: u8 = 1;

/// Crockford's base32: no I, L, O or U to misread.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

pub(crate) fn random<const N: usize>() -> Result<[u8; N], SyncError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| SyncError::Key(format!("no randomness: {e}")))?;
    Ok(bytes)
}

/// 256 bits that seal the person's records.
#[derive(Clone, PartialEq, Eq)]
pub struct VaultKey([u8; 32]);

impl std::fmt::Debug for VaultKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VaultKey(…)")
    }
}

impl VaultKey {
    pub fn generate() -> Result<Self, SyncError> {
        Ok(Self(random()?))
    }

    pub(crate) fn hex(&self) -> String {
        hex_encode(&self.0)
    }

    pub(crate) fn from_hex(hex: &str) -> Result<Self, SyncError> {
        let bytes = hex_decode(hex)
            .ok_or_else(|| SyncError::Key("the stored vault key is damaged".into()))?;
        Ok(Self(bytes))
    }

    /// The key as the person writes it down: 52 base32 characters in groups of four.
    pub fn recovery(&self) -> String {
        base32(&self.0)
    }

    pub fn from_recovery(words: &str) -> Result<Self, SyncError> {
        let bytes = unbase32(words)
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .ok_or_else(|| {
                SyncError::Key("that is not a recovery key (52 letters and digits, as `cairn sync key` shows it)".into())
            })?;
        Ok(Self(bytes))
    }

    /// Seals `plain` for the place (`space`, `device`, `idx`) it will have on the hub.
    pub fn seal(
        &self,
        plain: &[u8],
        space: &str,
        device: &str,
        idx: i64,
    ) -> Result<Vec<u8>, SyncError> {
        let nonce = random::<24>()?;
        let cipher = XChaCha20Poly1305::new((&self.0).into());
        let sealed = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plain,
                    aad: &place(space, device, idx),
                },
            )
            .map_err(|_| SyncError::Key("sealing a record failed".into()))?;
        let mut out = Vec::with_capacity(1 + 24 + sealed.len());
        out.push(FORMAT);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Opens what [`VaultKey::seal`] sealed for this place; an error when the key is not the one
    /// it was sealed with or the record was moved or changed.
    pub fn open(
        &self,
        sealed: &[u8],
        space: &str,
        device: &str,
        idx: i64,
    ) -> Result<Vec<u8>, SyncError> {
        let unreadable = || {
            SyncError::Key(format!(
                "record {idx} of device {device} does not open with this device's vault key (a key from another vault, or a record changed on the hub)"
            ))
        };
        if sealed.len() < 1 + 24 + 16 || sealed[0] != FORMAT {
            return Err(unreadable());
        }
        let cipher = XChaCha20Poly1305::new((&self.0).into());
        cipher
            .decrypt(
                XNonce::from_slice(&sealed[1..25]),
                Payload {
                    msg: &sealed[25..],
                    aad: &place(space, device, idx),
                },
            )
            .map_err(|_| unreadable())
    }

    /// The key sealed by a pairing secret, for the hub to hand the paired device.
    pub(crate) fn seal_for_pairing(&self, secret: &[u8]) -> Result<String, SyncError> {
        let sealed = PairingKey::from(secret).0.seal(&self.0, "pairing", "", 0)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(sealed))
    }

    pub(crate) fn open_from_pairing(sealed: &str, secret: &[u8]) -> Result<Self, SyncError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(sealed)
            .map_err(|_| SyncError::Key("the hub's sealed key is damaged".into()))?;
        let plain = PairingKey::from(secret)
            .0
            .open(&bytes, "pairing", "", 0)
            .map_err(|_| {
                SyncError::Key(
                    "the pairing code's secret does not open the vault key: check the code".into(),
                )
            })?;
        let key = <[u8; 32]>::try_from(plain.as_slice())
            .map_err(|_| SyncError::Key("the paired vault key has the wrong length".into()))?;
        Ok(Self(key))
    }
}

/// The key a pairing secret derives.
struct PairingKey(VaultKey);

impl From<&[u8]> for PairingKey {
    fn from(secret: &[u8]) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"cairn pairing v1\0");
        hash.update(secret);
        Self(VaultKey(hash.finalize().into()))
    }
}

fn place(space: &str, device: &str, idx: i64) -> Vec<u8> {
    format!("cairn record v1\0{space}\0{device}\0{idx}").into_bytes()
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_decode(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Bytes as base32, in groups of four characters.
pub(crate) fn base32(bytes: &[u8]) -> String {
    let mut chars = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(*byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            chars.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        chars.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    chars
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

/// The bytes of [`base32`] text; separators and case do not matter, and O, I, L read as 0, 1, 1.
pub(crate) fn unbase32(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.chars().filter(|c| c.is_ascii_alphanumeric()) {
        let c = match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        };
        let value = ALPHABET.iter().position(|a| *a as char == c)? as u32;
        buffer = (buffer << 5) | value;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_only_with_its_key_in_its_place() -> Result<(), SyncError> {
        let key = VaultKey::generate()?;
        let sealed = key.seal(b"my locker code is 4412", "vault", "laptop", 7)?;
        assert!(!String::from_utf8_lossy(&sealed).contains("locker"));
        assert_eq!(
            key.open(&sealed, "vault", "laptop", 7)?,
            b"my locker code is 4412"
        );
        assert!(
            key.open(&sealed, "vault", "laptop", 8).is_err(),
            "moved to another index"
        );
        assert!(
            key.open(&sealed, "vault", "desktop", 7).is_err(),
            "moved to another log"
        );
        assert!(VaultKey::generate()?
            .open(&sealed, "vault", "laptop", 7)
            .is_err());
        let mut changed = sealed.clone();
        if let Some(last) = changed.last_mut() {
            *last ^= 1;
        }
        assert!(key.open(&changed, "vault", "laptop", 7).is_err());
        // Two seals of the same record differ (a fresh nonce each).
        assert_ne!(key.seal(b"x", "v", "d", 1)?, key.seal(b"x", "v", "d", 1)?);
        Ok(())
    }

    #[test]
    fn the_recovery_key_reads_back_however_it_is_typed() -> Result<(), SyncError> {
        let key = VaultKey::generate()?;
        let words = key.recovery();
        assert_eq!(words.chars().filter(|c| *c != '-').count(), 52, "{words}");
        assert_eq!(
            VaultKey::from_recovery(&words.to_lowercase().replace('-', " "))?,
            key
        );
        assert!(VaultKey::from_recovery("not a key").is_err());
        assert_eq!(VaultKey::from_hex(&key.hex())?, key);
        Ok(())
    }

    #[test]
    fn a_paired_key_opens_only_with_the_secret() -> Result<(), SyncError> {
        let key = VaultKey::generate()?;
        let sealed = key.seal_for_pairing(b"secret")?;
        assert_eq!(VaultKey::open_from_pairing(&sealed, b"secret")?, key);
        assert!(VaultKey::open_from_pairing(&sealed, b"guess").is_err());
        Ok(())
    }
}
