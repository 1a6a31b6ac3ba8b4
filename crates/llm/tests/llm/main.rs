//! The OpenAI-compatible and Anthropic providers against a scripted mock server that records
//! every request, and Cairn's own model without its host program.

mod anthropic;
mod local;
mod openai;
