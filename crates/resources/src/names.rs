//! The one normal form of a place name, shared by the alias table (here) and every name
//! resolver above it (validation, the LLM parser, scoring).

use unicode_normalization::UnicodeNormalization;

/// NFKC (full/half width), lower case, without whitespace, `·` and trailing bracketed branch
/// or status suffixes such as (东馆), （本馆）, (暂停营业).
pub fn normalize(s: &str) -> String {
    let mut t: String = s.nfkc().collect::<String>().to_lowercase();
    loop {
        let trimmed = t.trim_end();
        if trimmed.ends_with(')')
            && let Some(open) = trimmed.rfind('(')
            && open > 0
        {
            t = trimmed[..open].to_string();
            continue;
        }
        break;
    }
    t.chars()
        .filter(|c| !c.is_whitespace() && *c != '·' && *c != '•' && *c != '-')
        .collect()
}
