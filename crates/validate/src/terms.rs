//! The names a line can say, for `lines`: per set (the release's vocabularies, a destination's
//! inventory, a task's tables) its terms by their first two characters, longest first, with
//! what each stands for; [`recognise`] takes the longest term of any set at a place in a line.

use gtb_core::FastMap as HashMap;
use gtb_core::task::Preference;
use gtb_resources::{Food, FoodKind, short_city_name, vocab};
use std::sync::OnceLock;

/// What a recognised stretch of a line stands for: a destination (the context of the items that
/// follow it), values of a table (a name, another name of it, the spoken form of a food), or both.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sense {
    pub(crate) city: Option<String>,
    pub(crate) values: Vec<String>,
}

impl Sense {
    fn merge(&mut self, other: &Sense) {
        if self.city.is_none() {
            self.city.clone_from(&other.city);
        }
        for v in &other.values {
            if !self.values.contains(v) {
                self.values.push(v.clone());
            }
        }
    }
}

/// Terms that can be recognised in a line, by their first character, longest first.
#[derive(Debug, Default)]
pub struct Terms {
    /// keyed by the first two characters (the second `\0` for a one-character term): a
    /// line is scanned at every character, so the lists tried there must be short
    by_first: HashMap<(char, char), Vec<(String, Sense)>>,
    /// the keys of `by_first`, as a filter asked first
    keys: KeyBits,
    /// each term's values by its whole text, for the sets built once and asked of every value
    /// of every task (`reads_as`); empty in a task's own set, which is asked of nothing
    exact: HashMap<Box<str>, Vec<String>>,
}

/// A 4,096-bit filter of the keys a [`Terms`] holds. A line is scanned at every character
/// against three or four sets, and most characters start no term of a set: the map is asked
/// only where the key's bit is set.
#[derive(Debug)]
pub(crate) struct KeyBits(Box<[u64; 64]>);

impl Default for KeyBits {
    fn default() -> Self {
        KeyBits(Box::new([0; 64]))
    }
}

impl KeyBits {
    fn bit((a, b): (char, char)) -> usize {
        let h = (a as u32).wrapping_mul(0x9E37_79B9) ^ (b as u32).wrapping_mul(0x85EB_CA6B);
        (h >> 20) as usize
    }
    pub(crate) fn insert(&mut self, key: (char, char)) {
        let i = Self::bit(key);
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub(crate) fn may_hold(&self, key: (char, char)) -> bool {
        let i = Self::bit(key);
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

/// The keys of several sets at once (their filters joined): a line's scan asks this first at
/// each character, and the sets themselves only where a term of one may start.
pub(crate) struct AnyKey(KeyBits);

impl AnyKey {
    pub(crate) fn of(sets: &[&Terms]) -> AnyKey {
        let mut bits = KeyBits::default();
        for s in sets {
            for (w, x) in bits.0.iter_mut().zip(s.keys.0.iter()) {
                *w |= x;
            }
        }
        AnyKey(bits)
    }
    /// The key of a text that starts with `first` and `second` (`\0` at its end) where a term
    /// of some set may start it (no false "no"), for [`recognise`].
    pub(crate) fn may_start(&self, first: char, second: char) -> Option<(char, char)> {
        let may =
            (second != '\0' && self.0.may_hold((first, second))) || self.0.may_hold((first, '\0'));
        may.then_some((first, second))
    }
}

/// `text.trim()`, without the Unicode table lookups where both ends are plainly not white
/// space (a printable ASCII character or a CJK ideograph): most terms and values are such.
fn trimmed(text: &str) -> &str {
    let plain = |c: Option<char>| {
        c.is_some_and(|c| c.is_ascii_graphic() || ('\u{4e00}'..='\u{9fff}').contains(&c))
    };
    match plain(text.chars().next()) && plain(text.chars().next_back()) {
        true => text,
        false => text.trim(),
    }
}

/// The key of a term or of the text at a position: its first two characters.
fn key2(text: &str) -> Option<(char, char)> {
    let mut cs = text.chars();
    Some((cs.next()?, cs.next().unwrap_or('\0')))
}

impl Terms {
    fn add(&mut self, surface: &str, sense: Sense) {
        let surface = trimmed(surface);
        let Some(key) = key2(surface) else {
            return;
        };
        self.keys.insert(key);
        let list = self.by_first.entry(key).or_default();
        match list.iter_mut().find(|(s, _)| s == surface) {
            Some((_, known)) => known.merge(&sense),
            None => list.push((surface.to_string(), sense)),
        }
    }
    /// A value that stands for itself, and the spoken form of a food (奶茶 for 奶茶/茶饮).
    fn add_value(&mut self, v: &str) {
        self.add_value_beyond(v, &[]);
    }
    /// Longest first, then by text: the scan takes the first that fits.
    fn sorted(mut self) -> Terms {
        for list in self.by_first.values_mut() {
            list.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then(a.cmp(b)));
        }
        self
    }
    /// [`Terms::sorted`], with each term's values indexed by its text for [`Terms::reads_as`].
    fn sorted_indexed(self) -> Terms {
        let mut t = self.sorted();
        let exact = t.by_first.values().flatten();
        t.exact = exact
            .map(|(s, sense)| (s.as_str().into(), sense.values.clone()))
            .collect();
        t
    }
    /// The longest term that starts `text`, whose first two characters are `key` (`key2`):
    /// those of two or more characters share them, and are longer than those of one.
    fn longest_at(&self, text: &str, (first, second): (char, char)) -> Option<(usize, &Sense)> {
        let fits = |key| {
            if !self.keys.may_hold(key) {
                return None;
            }
            self.by_first
                .get(&key)?
                .iter()
                .find(|(s, _)| text.starts_with(s.as_str()))
                .map(|(s, sense)| (s.len(), sense))
        };
        let longer = (second != '\0').then(|| fits((first, second))).flatten();
        longer.or_else(|| fits((first, '\0')))
    }

    /// The closed vocabularies of the release: modes, hotel categories, attraction categories,
    /// food categories (built once).
    pub fn vocabularies() -> &'static Terms {
        static TERMS: OnceLock<Terms> = OnceLock::new();
        TERMS.get_or_init(|| {
            let mut t = Terms::default();
            let all = vocab::TRANSPORT_MODES
                .iter()
                .chain(&vocab::HOTEL_CATEGORIES)
                .chain(vocab::ATTRACTION_CATEGORIES)
                .chain(vocab::FOOD_CATEGORIES)
                .chain(vocab::FOOD_ANYWHERE);
            for v in all.filter(|v| v.chars().count() >= 2) {
                t.add_value(v);
            }
            t.sorted_indexed()
        })
    }

    /// One destination: its names (full and short), its sights and their other names, its
    /// dishes and food categories.
    pub fn city<'a>(
        name: &str,
        sights: impl IntoIterator<Item = &'a str>,
        aliases: impl IntoIterator<Item = (&'a str, &'a str)>,
        foods: &[Food],
    ) -> Terms {
        let mut t = Terms::default();
        let here = Sense {
            city: Some(name.to_string()),
            values: Vec::new(),
        };
        t.add(name, here.clone());
        let short = short_city_name(name);
        if short.chars().count() >= 2 {
            t.add(short, here);
        }
        for s in sights {
            t.add_value(s);
        }
        for (alias, canonical) in aliases {
            let sense = Sense {
                city: None,
                values: vec![canonical.to_string()],
            };
            t.add(alias, sense);
        }
        // restaurant names are values only where a table names them (a store lists hundreds)
        for f in foods {
            if f.kind == FoodKind::Dish {
                t.add_value(&f.name);
            }
            t.add_value(&f.category);
        }
        t.sorted_indexed()
    }

    /// Every value of the task's tables (any member: a line that says another member's item
    /// is caught too).
    pub fn tables<'a>(tables: impl IntoIterator<Item = &'a Preference>) -> Terms {
        let values = tables
            .into_iter()
            .flat_map(|p| p.list_items().map(|i| i.value));
        Terms::tables_beyond(values, &[])
    }

    /// The values of the task's tables (`values`: their list items' values) that `known` does
    /// not already recognise as themselves. A term every line is scanned for costs at each
    /// character, and most values are sights, foods or vocabulary the city and vocabulary sets
    /// hold: leaving them out changes nothing, as senses of one surface are merged as sets
    /// (`recognise`).
    pub fn tables_beyond<'a>(values: impl IntoIterator<Item = &'a str>, known: &[&Terms]) -> Terms {
        let mut t = Terms::default();
        // members share many values (copied tiers, the same sights): each is looked up once
        let mut seen: gtb_core::FastSet<&str> =
            gtb_core::FastSet::with_capacity_and_hasher(128, Default::default());
        for v in values {
            if seen.insert(v) {
                t.add_value_beyond(v, known);
            }
        }
        t.sorted()
    }

    /// `add_value`, for the surfaces no set of `known` already reads as `v`.
    fn add_value_beyond(&mut self, v: &str, known: &[&Terms]) {
        let spoken = vocab::spoken_food(v);
        let spoken = (spoken != v && spoken.chars().count() >= 2).then_some(spoken);
        for surface in std::iter::once(v).chain(spoken) {
            if !known.iter().any(|k| k.reads_as(surface, v)) {
                let sense = Sense {
                    city: None,
                    values: vec![v.to_string()],
                };
                self.add(surface, sense);
            }
        }
    }

    /// Whether `surface` is one of these terms and stands for `value`.
    fn reads_as(&self, surface: &str, value: &str) -> bool {
        let surface = trimmed(surface);
        if !self.exact.is_empty() {
            let values = self.exact.get(surface);
            return values.is_some_and(|values| values.iter().any(|x| x == value));
        }
        key2(surface)
            .and_then(|key| self.by_first.get(&key))
            .and_then(|list| list.iter().find(|(s, _)| s == surface))
            .is_some_and(|(_, sense)| sense.values.iter().any(|x| x == value))
    }
}

/// What [`recognise`] found: the length of the term, the destination it names (if any) and the
/// values it stands for, borrowed from the sets unless two sets had to be merged.
pub(crate) struct Found<'a> {
    pub(crate) len: usize,
    pub(crate) city: Option<&'a str>,
    pub(crate) values: std::borrow::Cow<'a, [String]>,
}

/// The longest term of any set that starts `text` (whose `key2` is `key`), its senses merged
/// when sets agree on it: the first destination named, and the values of every set in set
/// order, each once.
pub(crate) fn recognise<'a>(
    sets: &[&'a Terms],
    text: &str,
    key: (char, char),
) -> Option<Found<'a>> {
    let mut found: Option<Found<'a>> = None;
    for (len, sense) in sets.iter().filter_map(|&s| s.longest_at(text, key)) {
        match &mut found {
            Some(f) if f.len > len => {}
            Some(f) if f.len == len => {
                f.city = f.city.or(sense.city.as_deref());
                for v in &sense.values {
                    if !f.values.contains(v) {
                        f.values.to_mut().push(v.clone());
                    }
                }
            }
            _ => {
                found = Some(Found {
                    len,
                    city: sense.city.as_deref(),
                    values: std::borrow::Cow::Borrowed(&sense.values),
                })
            }
        }
    }
    found
}

/// The terms of one city of the inventory: what the validator and the LLM reply checks read
/// its lines with.
pub fn inventory_terms(res: &gtb_resources::Resources, id: gtb_resources::CityId) -> Terms {
    let i = id as usize;
    Terms::city(
        &res.city(id).name,
        res.attractions[i].iter().map(|a| a.name.as_str()),
        res.aliases[i]
            .iter()
            .map(|a| (a.alias.as_str(), a.name.as_str())),
        &res.food[i],
    )
}
