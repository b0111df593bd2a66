//! Numbers as people read them in reports.

/// Digits in groups of three: `grouped(1240, ',')` is "1,240".
pub fn grouped(n: u64, sep: char) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(ch);
    }
    out
}
