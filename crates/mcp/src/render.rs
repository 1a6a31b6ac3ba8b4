//! A `tools/call` result as the text the model reads: text blocks as they are, other blocks
//! described in a line, structured content as JSON when there is nothing else.

use serde_json::Value;

/// The result's text, and whether the server flagged it as an error (`isError`).
pub fn render_result(result: &Value) -> (String, bool) {
    let failed = result["isError"].as_bool().unwrap_or(false);
    let mut parts: Vec<String> = Vec::new();
    for block in result["content"].as_array().into_iter().flatten() {
        let part = match block["type"].as_str().unwrap_or("") {
            "text" => block["text"].as_str().unwrap_or("").to_owned(),
            "image" | "audio" => format!(
                "[{} {}, {} bytes of base64]",
                block["type"].as_str().unwrap_or(""),
                block["mimeType"].as_str().unwrap_or("of unknown type"),
                block["data"].as_str().map_or(0, str::len)
            ),
            "resource" => {
                let resource = &block["resource"];
                match resource["text"].as_str() {
                    Some(text) => format!(
                        "[resource {}]\n{text}",
                        resource["uri"].as_str().unwrap_or("")
                    ),
                    None => format!(
                        "[resource {} ({})]",
                        resource["uri"].as_str().unwrap_or(""),
                        resource["mimeType"].as_str().unwrap_or("binary")
                    ),
                }
            }
            "resource_link" => format!(
                "[link {}: {}]",
                block["name"].as_str().unwrap_or(""),
                block["uri"].as_str().unwrap_or("")
            ),
            other => format!("[{other} content]"),
        };
        parts.push(part);
    }
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.push(structured.to_string());
        }
    }
    (parts.join("\n"), failed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_kind_of_block_reads_as_text() {
        let (text, failed) = render_result(&json!({
            "content": [
                {"type": "text", "text": "Echo: hi"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
                {"type": "resource_link", "name": "b", "uri": "file:///b"}
            ]
        }));
        assert!(!failed);
        assert_eq!(
            text,
            "Echo: hi\n[image image/png, 4 bytes of base64]\n[resource file:///a.txt]\nalpha\n[link b: file:///b]"
        );
        let (text, failed) = render_result(
            &json!({"content": [], "structuredContent": {"sum": 3}, "isError": true}),
        );
        assert!(failed);
        assert_eq!(text, "{\"sum\":3}");
    }
}
