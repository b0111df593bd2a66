//! Strings joined into one text, so that those containing a needle are found by one scan of
//! it (`memchr::memmem`) rather than one search per string. A city of the release's
//! 338,000-POI dump has thousands of venues, and the resolver's `_match_poi`
//! (`PoiDb::find`) and the world's `search_poi` look through all of them per lookup.

use memchr::memmem::Finder;

/// Strings joined, each followed by 0xFF: a byte that no UTF-8 text holds, so that no match
/// of a UTF-8 needle spans two of them.
#[derive(Debug, Default)]
pub struct Joined {
    text: Vec<u8>,
    /// where each string begins in `text`
    starts: Vec<usize>,
    /// the longest string, in bytes
    longest: usize,
}

impl Joined {
    pub fn new<'a>(strings: impl Iterator<Item = &'a str>) -> Self {
        let mut j = Joined::default();
        for s in strings {
            j.starts.push(j.text.len());
            j.text.extend_from_slice(s.as_bytes());
            j.text.push(0xFF);
            j.longest = j.longest.max(s.len());
        }
        j
    }

    /// The strings (by position) that contain the finder's needle, ascending, each once: the
    /// positions of `s.contains(needle)` over the strings, a UTF-8 needle (an empty one is
    /// contained in every string).
    pub fn containing<'s>(&'s self, finder: &'s Finder<'_>) -> impl Iterator<Item = usize> + 's {
        let mut last = None;
        finder.find_iter(&self.text).filter_map(move |at| {
            let i = self.starts.partition_point(|&s| s <= at).checked_sub(1)?;
            (last != Some(i)).then(|| {
                last = Some(i);
                i
            })
        })
    }

    /// The longest string, in bytes.
    pub fn longest(&self) -> usize {
        self.longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `containing` gives what `contains` gives, string by string, for needles that occur
    /// once, twice, at the ends, across two strings, not at all, and empty.
    #[test]
    fn containing_is_contains_string_by_string() {
        let strings = [
            "西湖",
            "",
            "西湖西湖醋鱼",
            "湖",
            "楼外楼",
            "外楼西",
            "a\u{FFFD}b",
            "西",
        ];
        let joined = Joined::new(strings.iter().copied());
        for needle in [
            "西湖",
            "湖",
            "楼西",
            "湖西",
            "西",
            "",
            "醋鱼",
            "b",
            "楼外楼外",
            "\u{FFFD}",
        ] {
            let finder = Finder::new(needle.as_bytes());
            let got: Vec<usize> = joined.containing(&finder).collect();
            let want: Vec<usize> = (0..strings.len())
                .filter(|&i| strings[i].contains(needle))
                .collect();
            assert_eq!(got, want, "{needle:?}");
        }
        assert_eq!(joined.longest(), "西湖西湖醋鱼".len());
        let none = Joined::new(std::iter::empty());
        assert_eq!(none.containing(&Finder::new(b"")).count(), 0);
    }
}
