//! The words of a line that give its stance and strength (must, prefer, avoid, reject) or
//! make a figure a limit, longest first.

use super::*;
use crate::terms::KeyBits;

/// How firmly a stance is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strength {
    Firm,
    Mild,
    /// the word says the stance but not how firmly (不想, 不要)
    Either,
}

/// A set of strengths: the words of one stance in a clause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Strengths(u8);

impl Strengths {
    fn bit(s: Strength) -> u8 {
        match s {
            Strength::Firm => 1,
            Strength::Mild => 2,
            Strength::Either => 4,
        }
    }
    pub(super) fn insert(&mut self, s: Strength) {
        self.0 |= Self::bit(s);
    }
    pub(super) fn contains(self, s: Strength) -> bool {
        self.0 & Self::bit(s) != 0
    }
    pub(super) fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether a tier of this strength (`strong`) is said so by any word of the set.
    pub(super) fn fit(self, strong: bool) -> bool {
        self.contains(Strength::Either)
            || (strong && self.contains(Strength::Firm))
            || (!strong && self.contains(Strength::Mild))
    }
}

/// A word of stance or limit.
#[derive(Debug, Clone, Copy)]
pub(super) struct Marker {
    /// for (true) or against (false), and how firmly
    pub(super) stance: Option<(bool, Strength)>,
    /// says a limit (不能超过, 最多, 以内): how a budget or intensity is said
    pub(super) limit: bool,
}

pub(super) const fn stance(positive: bool, s: Strength) -> Marker {
    Marker {
        stance: Some((positive, s)),
        limit: false,
    }
}
pub(super) const LIMIT: Marker = Marker {
    stance: None,
    limit: true,
};

/// Words of stance and limit (§6's lists and their everyday variants). The scan takes the
/// longest at each place, so 非去不可 is a firm yes, not a 不.
pub(super) const MARKERS: &[(&str, Marker)] = {
    use Strength::*;
    &[
        ("一定要", stance(true, Firm)),
        ("一定得", stance(true, Firm)),
        ("一定", stance(true, Firm)),
        ("必须", stance(true, Firm)),
        ("非去不可", stance(true, Firm)),
        ("非吃不可", stance(true, Firm)),
        ("非坐不可", stance(true, Firm)),
        ("非住不可", stance(true, Firm)),
        ("不可错过", stance(true, Firm)),
        ("不能错过", stance(true, Firm)),
        ("不能少", stance(true, Firm)),
        ("少不了", stance(true, Firm)),
        ("肯定得", stance(true, Firm)),
        ("肯定要", stance(true, Firm)),
        ("绝对要", stance(true, Firm)),
        ("必去", stance(true, Firm)),
        ("必吃", stance(true, Firm)),
        ("必打卡", stance(true, Firm)),
        ("务必", stance(true, Firm)),
        ("最想", stance(true, Firm)),
        ("没得商量", stance(true, Firm)),
        (
            "底线",
            Marker {
                stance: Some((true, Firm)),
                limit: true,
            },
        ),
        ("最好", stance(true, Mild)),
        ("比较想", stance(true, Mild)),
        ("倾向", stance(true, Mild)),
        ("挺感兴趣", stance(true, Mild)),
        ("感兴趣", stance(true, Mild)),
        ("想", stance(true, Mild)),
        ("喜欢", stance(true, Mild)),
        ("希望", stance(true, Mild)),
        ("尽量", stance(true, Mild)),
        ("绝对不", stance(false, Firm)),
        ("绝对别", stance(false, Firm)),
        ("坚决不", stance(false, Firm)),
        ("坚决拒绝", stance(false, Firm)),
        ("打死都不", stance(false, Firm)),
        ("打死也不", stance(false, Firm)),
        ("打死我都不", stance(false, Firm)),
        ("打死我也不", stance(false, Firm)),
        ("死都不", stance(false, Firm)),
        ("千万别", stance(false, Firm)),
        ("千万不要", stance(false, Firm)),
        ("千万不能", stance(false, Firm)),
        ("一定不", stance(false, Firm)),
        ("绝不", stance(false, Firm)),
        ("决不", stance(false, Firm)),
        ("拒绝", stance(false, Firm)),
        ("受不了", stance(false, Firm)),
        ("接受不了", stance(false, Firm)),
        ("不接受", stance(false, Firm)),
        ("讨厌", stance(false, Firm)),
        ("尽量别", stance(false, Mild)),
        ("尽量不", stance(false, Mild)),
        ("尽量避免", stance(false, Mild)),
        ("不太想", stance(false, Mild)),
        ("不太喜欢", stance(false, Mild)),
        ("不太", stance(false, Mild)),
        ("不怎么", stance(false, Mild)),
        ("不喜欢", stance(false, Mild)),
        ("没兴趣", stance(false, Mild)),
        ("不感兴趣", stance(false, Mild)),
        ("就算了", stance(false, Mild)),
        ("算了", stance(false, Mild)),
        ("能避开", stance(false, Mild)),
        ("能避则避", stance(false, Mild)),
        ("避开", stance(false, Mild)),
        ("避免", stance(false, Mild)),
        ("不想", stance(false, Either)),
        ("不要", stance(false, Either)),
        ("不去", stance(false, Either)),
        ("不吃", stance(false, Either)),
        ("不坐", stance(false, Either)),
        ("不住", stance(false, Either)),
        ("不碰", stance(false, Either)),
        ("不考虑", stance(false, Either)),
        ("不行", stance(false, Either)),
        ("别", stance(false, Either)),
        ("不能超过", LIMIT),
        ("不能超", LIMIT),
        ("不超过", LIMIT),
        ("别超过", LIMIT),
        ("不要超过", LIMIT),
        ("不得超过", LIMIT),
        ("超过", LIMIT),
        ("最多", LIMIT),
        ("顶多", LIMIT),
        ("以内", LIMIT),
        ("之内", LIMIT),
        ("上限", LIMIT),
        ("极限", LIMIT),
        ("封顶", LIMIT),
        ("控制在", LIMIT),
        ("不能再多", LIMIT),
    ]
};

/// The markers by first character, longest first, with a filter of those characters (keyed
/// `(first, '\0')`): read at every character of a line, and most characters start no marker.
struct ByFirst {
    map: HashMap<char, Vec<(&'static str, Marker)>>,
    firsts: KeyBits,
}

impl ByFirst {
    fn get() -> &'static ByFirst {
        static BY_FIRST: OnceLock<ByFirst> = OnceLock::new();
        BY_FIRST.get_or_init(|| {
            let mut map: HashMap<char, Vec<(&str, Marker)>> = HashMap::default();
            let mut firsts = KeyBits::default();
            for &(w, m) in MARKERS {
                let first = w.chars().next().expect("a marker is a word");
                map.entry(first).or_default().push((w, m));
                firsts.insert((first, '\0'));
            }
            for list in map.values_mut() {
                list.sort_by_key(|(w, _)| std::cmp::Reverse(w.len()));
            }
            ByFirst { map, firsts }
        })
    }
}

/// Whether a marker may start with `first` (no false "no"): most characters start none.
pub(super) fn may_start(first: char) -> bool {
    ByFirst::get().firsts.may_hold((first, '\0'))
}

/// The marker that starts `text`, longest first (asked where [`may_start`] says one may).
pub(super) fn marker_at(text: &str) -> Option<(usize, Marker)> {
    let first = text.chars().next()?;
    ByFirst::get()
        .map
        .get(&first)?
        .iter()
        .find(|(w, _)| text.starts_with(w))
        .map(|(w, m)| (w.len(), *m))
}
