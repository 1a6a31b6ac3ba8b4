//! BERT's uncased tokenizer: lower-casing, accent stripping, splitting on whitespace, punctuation
//! and around CJK characters, then greedy longest-match WordPiece over the vocabulary.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

/// The tokenizer with its vocabulary.
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    cls: u32,
    sep: u32,
    unk: u32,
}

/// Words longer than this many characters become `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

impl WordPiece {
    /// Builds the tokenizer from `vocab.txt` (one token per line, the line number is the id).
    pub fn new(vocab_txt: &str) -> Result<Self, String> {
        let vocab: HashMap<String, u32> = vocab_txt
            .lines()
            .enumerate()
            .map(|(i, token)| (token.to_owned(), i as u32))
            .collect();
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("the vocabulary lacks {t}"))
        };
        Ok(Self {
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            unk: id("[UNK]")?,
            vocab,
        })
    }

    /// `[CLS] tokens… [SEP]`, at most `max` ids in all.
    pub fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        for word in basic_tokens(text) {
            if ids.len() + 1 >= max {
                break;
            }
            self.word_pieces(&word, &mut ids);
        }
        ids.truncate(max.saturating_sub(1).max(1));
        ids.push(self.sep);
        ids
    }

    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let piece: String = chars[start..end].iter().collect();
                let piece = if start > 0 {
                    format!("##{piece}")
                } else {
                    piece
                };
                if let Some(id) = self.vocab.get(&piece) {
                    found = Some(*id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    pieces.push(id);
                    start = end;
                }
                None => {
                    out.push(self.unk);
                    return;
                }
            }
        }
        out.extend(pieces);
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

fn is_punctuation(c: char) -> bool {
    let code = c as u32;
    (33..=47).contains(&code)
        || (58..=64).contains(&code)
        || (91..=96).contains(&code)
        || (123..=126).contains(&code)
        || (!c.is_alphanumeric()
            && !c.is_whitespace()
            && !c.is_control()
            && c.is_ascii_punctuation())
        || matches!(
            c,
            '“' | '”'
                | '‘'
                | '’'
                | '…'
                | '—'
                | '–'
                | '。'
                | '，'
                | '、'
                | '！'
                | '？'
                | '：'
                | '；'
                | '（'
                | '）'
                | '《'
                | '》'
                | '「'
                | '」'
        )
}

/// Lower-cased, accent-free words and single punctuation marks / CJK characters.
fn basic_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, tokens: &mut Vec<String>| {
        if !current.is_empty() {
            tokens.push(std::mem::take(current));
        }
    };
    for c in text.nfd() {
        if unicode_normalization::char::is_combining_mark(c)
            || c == '\u{0}'
            || c == '\u{fffd}'
            || (c.is_control() && !c.is_whitespace())
        {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut current, &mut tokens);
        } else if is_cjk(c) || is_punctuation(c) {
            flush(&mut current, &mut tokens);
            tokens.push(c.to_string());
        } else {
            current.extend(c.to_lowercase());
        }
    }
    flush(&mut current, &mut tokens);
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> Result<WordPiece, String> {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ing", "the", "cafe", ",", "猫", "un",
            "##aff", "##able",
        ];
        WordPiece::new(&vocab.join("\n"))
    }

    #[test]
    fn words_split_into_known_pieces() -> Result<(), String> {
        let t = tokenizer()?;
        assert_eq!(
            t.encode("Playing the Café, unaffable 猫!", 64),
            vec![2, 4, 5, 6, 7, 8, 10, 11, 12, 9, 1, 3]
        );
        Ok(())
    }

    #[test]
    fn long_inputs_are_cut_to_the_limit_with_sep_last() -> Result<(), String> {
        let t = tokenizer()?;
        let ids = t.encode(&"the ".repeat(100), 8);
        assert_eq!(ids.len(), 8);
        assert_eq!(ids.first(), Some(&2));
        assert_eq!(ids.last(), Some(&3));
        Ok(())
    }
}
