//! The OpenAI-compatible provider against a scripted mock server that records every request.

mod anthropic;
mod openai;
