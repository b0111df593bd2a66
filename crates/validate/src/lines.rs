//! Check `lines`: every opening line agrees with its speaker's table and reveals something.
//!
//! A line is read the way a person reads it. It is cut into sentences and clauses; in each
//! clause the names it says are recognised (sights, attraction categories, foods, transport
//! modes, hotel categories, cities, and figures of a budget, hours or sights a day), and so are
//! the words that give its stance and strength (task_format.md §6: 一定要 / 必须 / 非去不可 for a
//! must, 绝对不 / 坚决不 / 千万别 for a reject, 最好 / 比较想 / 倾向 for a prefer, 尽量别 / 不太想 /
//! 就算了 for an avoid). Then:
//!
//! * every value said is in the speaker's own table, in a tier of the stance the clause takes
//!   (wanted: must or prefer; unwanted: avoid or reject), worded as firmly as its tier;
//! * a budget or intensity figure is the speaker's own, said as a limit;
//! * the line voices 1 to [`MAX_ASPECTS`] aspects of the table (budget, intensity, transport,
//!   hotels, sights, categories, food). The release's own lines name up to six items but never
//!   more than three aspects, so the bound is on aspects.
//!
//! The same [`check_line`] screens the LLM's replies (`gtb_llm::parse`), so a reply is told
//! exactly what `gtb validate` would find.

use super::{Mode, Outcome, Validator, finding};
use crate::terms::{AnyKey, recognise};
pub use crate::terms::{Terms, inventory_terms};
use gtb_core::FastMap as HashMap;
use gtb_core::prefs::{ListItem, Scalar, Subject};
use gtb_core::task::{Preference, Task};
use std::sync::OnceLock;

mod figures;
mod words;
use figures::{Figure, figure_at};
use words::{Strength, Strengths, marker_at};

/// The most aspects one opening line may voice.
pub const MAX_ASPECTS: usize = 4;

/// One clause: what it names, in order, with the city in context at each name.
#[derive(Debug, Default)]
struct Clause<'a> {
    mentions: Vec<Mention<'a>>,
    figures: Vec<Figure>,
    stances: Vec<(bool, Strength)>,
    limit: bool,
}

/// A name said, borrowed from the terms and the line: the values it stands for, the city in
/// context, the words said.
#[derive(Debug)]
struct Mention<'a> {
    values: std::borrow::Cow<'a, [String]>,
    city: Option<&'a str>,
    said: &'a str,
}

impl Clause<'_> {
    /// Against if any word says so (能避开最好 is an avoid), else for, else none.
    fn stance(&self) -> Option<(bool, Strengths)> {
        let (mut against, mut for_) = (Strengths::default(), Strengths::default());
        for &(p, s) in &self.stances {
            if p { for_.insert(s) } else { against.insert(s) }
        }
        if !against.is_empty() {
            return Some((false, against));
        }
        (!for_.is_empty()).then_some((true, for_))
    }
}

/// A problem of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineIssue {
    /// says a value that is not in the speaker's table
    NotInTable { item: String },
    /// says a value with the opposite stance to its tier
    Stance {
        item: String,
        wanted: bool,
        field: &'static str,
    },
    /// says a value with the right stance but the wrong strength
    Strength {
        item: String,
        field: &'static str,
        firm: bool,
    },
    /// states a budget or intensity figure that is not the speaker's
    Figure {
        field: &'static str,
        said: u32,
        table: u32,
    },
    /// states the speaker's figure without a word of limit
    FigureWording { field: &'static str, said: u32 },
    /// says nothing of the table
    Nothing,
    /// says too many aspects of the table
    TooMany { aspects: usize },
}

impl LineIssue {
    /// The item or figure the issue is about ("" for the whole line).
    pub fn item(&self) -> String {
        match self {
            LineIssue::NotInTable { item }
            | LineIssue::Stance { item, .. }
            | LineIssue::Strength { item, .. } => item.clone(),
            LineIssue::Figure { said, .. } | LineIssue::FigureWording { said, .. } => {
                said.to_string()
            }
            LineIssue::Nothing | LineIssue::TooMany { .. } => String::new(),
        }
    }
    /// The finding's message (English, for `gtb validate` and the report).
    pub fn message(&self) -> String {
        match self {
            LineIssue::NotInTable { item } => {
                format!("the line voices {item:?}, which is not in the speaker's table")
            }
            LineIssue::Stance {
                item,
                wanted,
                field,
            } => format!(
                "the line says {item:?} is {}, but the speaker's table has it under {field}",
                if *wanted { "wanted" } else { "unwanted" }
            ),
            LineIssue::Strength { item, field, firm } => format!(
                "the line words {item:?} {}, but it is a {field} ({})",
                if *firm { "mildly" } else { "firmly" },
                tier_words(*firm)
            ),
            LineIssue::Figure { field, said, table } => {
                format!("the line states {said} for {field}, but the speaker's table has {table}")
            }
            LineIssue::FigureWording { field, said } => format!(
                "the line states {field} {said} without a word of limit (不能超过 / 最多 / 以内 / 底线)"
            ),
            LineIssue::Nothing => format!(
                "the line voices none of the speaker's preferences (it should voice 1 to {MAX_ASPECTS}: budget, intensity, transport, hotels, sights, categories, food)"
            ),
            LineIssue::TooMany { aspects } => format!(
                "the line voices {aspects} aspects of the speaker's table (budget, intensity, transport, hotels, sights, categories, food); at most {MAX_ASPECTS}"
            ),
        }
    }
    /// The same in Chinese, for the correction turn of an LLM reply.
    pub fn message_zh(&self) -> String {
        match self {
            LineIssue::NotInTable { item } => {
                format!("开场白提到「{item}」，但它不在该成员自己的偏好表中")
            }
            LineIssue::Stance {
                item,
                wanted,
                field,
            } => format!(
                "开场白把「{item}」说成{}，但偏好表里它在 {field} 中：语气要与档位一致",
                if *wanted { "想要的" } else { "不想要的" }
            ),
            LineIssue::Strength { item, field, firm } => format!(
                "开场白对「{item}」的语气{}，但它在 {field} 中，应该用：{}",
                if *firm { "太弱" } else { "太强" },
                tier_words(*firm)
            ),
            LineIssue::Figure { field, said, table } => {
                format!("开场白说的 {said} 与偏好表的 {field}（{table}）不一致")
            }
            LineIssue::FigureWording { field, said } => {
                format!("开场白说 {field} 的 {said} 时要说成上限（不能超过 / 最多 / 以内 / 底线）")
            }
            LineIssue::Nothing => format!(
                "开场白没有说出该成员的任何偏好：要说出偏好表中的 1 到 {MAX_ASPECTS} 个方面（预算、强度、交通、酒店、景点、景点类别、美食）"
            ),
            LineIssue::TooMany { aspects } => {
                format!("开场白说了偏好表的 {aspects} 个方面，最多 {MAX_ASPECTS} 个")
            }
        }
    }
}

/// §6's words for a firm or a mild tier.
fn tier_words(firm: bool) -> &'static str {
    if firm {
        "一定要 / 必须 / 非去不可 或 绝对不 / 坚决不 / 千万别"
    } else {
        "最好 / 比较想 / 倾向 或 尽量别 / 不太想 / 就算了"
    }
}

/// Check one opening line against its speaker's table. `sets` are the terms to recognise: the
/// release's vocabularies, the task's cities, the task's tables.
pub fn check_line<'a>(sets: &[&'a Terms], table: &Preference, text: &'a str) -> Vec<LineIssue> {
    let items: Vec<ListItem> = table.list_items().collect();
    check_line_items(sets, &AnyKey::of(sets), table, &items, text)
}

/// [`check_line`] with the table's list items (`Preference::list_items`) already walked and
/// the sets' keys joined (`any`).
fn check_line_items<'a>(
    sets: &[&'a Terms],
    any: &AnyKey,
    table: &Preference,
    items: &[ListItem],
    text: &'a str,
) -> Vec<LineIssue> {
    let mut issues = Vec::new();
    let mut aspects: Vec<&'static str> = Vec::new();
    for sentence in text.split(['。', '！', '？', '!', '?', '；', ';', '\n', '…']) {
        // a city named sets the context of its sentence only: 「到丽江必须吃米灌肠。云南菜我绝对不吃。」
        // says nothing of 丽江 in its second sentence
        let mut city: Option<&str> = None;
        let clauses: Vec<Clause> = clauses(sentence)
            .into_iter()
            .map(|c| read_clause(sets, any, c, &mut city))
            .collect();
        let limit = clauses.iter().any(|c| {
            c.limit
                || c.stance()
                    .is_some_and(|(p, s)| p && s.contains(Strength::Firm))
        });
        for (i, c) in clauses.iter().enumerate() {
            let stance = c.stance().or_else(|| inherited(&clauses, i));
            for m in &c.mentions {
                let issue = mention(items, &m.values, m.city, m.said, stance);
                match issue {
                    Ok(subject) => push_aspect(&mut aspects, subject),
                    Err(e) => issues.push(e),
                }
            }
            for f in &c.figures {
                let (scalar, said) = f.scalar();
                let own = scalar.get(&table.global_constraints);
                if said != own {
                    issues.push(LineIssue::Figure {
                        field: scalar.path(),
                        said,
                        table: own,
                    });
                } else if !limit {
                    issues.push(LineIssue::FigureWording {
                        field: scalar.path(),
                        said,
                    });
                }
                push_aspect(&mut aspects, aspect_of_scalar(scalar));
            }
        }
    }
    if aspects.is_empty() && issues.is_empty() {
        issues.push(LineIssue::Nothing);
    } else if aspects.len() > MAX_ASPECTS {
        issues.push(LineIssue::TooMany {
            aspects: aspects.len(),
        });
    }
    issues
}

fn push_aspect(aspects: &mut Vec<&'static str>, a: &'static str) {
    if !aspects.contains(&a) {
        aspects.push(a);
    }
}

fn aspect_of_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::AvgBudget => "budget",
        Scalar::MaxPoiPerDay | Scalar::MaxActiveHours => "intensity",
    }
}

fn aspect_of_subject(s: Subject) -> &'static str {
    match s {
        Subject::Mode => "transport",
        Subject::Hotel => "hotels",
        Subject::Sight => "sights",
        Subject::Category => "categories",
        Subject::Food => "food",
    }
}

/// The clauses of a sentence: cut at commas and colons, and before 但 / 不过 / 可是.
fn clauses(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, ch) in sentence.char_indices() {
        let cut_after = matches!(ch, '，' | ',' | '：' | ':');
        let rest = &sentence[i..];
        let cut_before = i > start
            && matches!(ch, '但' | '不' | '可')
            && ["但", "不过", "可是"].iter().any(|w| rest.starts_with(w));
        if cut_before {
            out.push(&sentence[start..i]);
            start = i;
        }
        if cut_after {
            out.push(&sentence[start..i]);
            start = i + ch.len_utf8();
        }
    }
    out.push(&sentence[start..]);
    out.retain(|c| !c.trim().is_empty());
    out
}

/// The stance a clause without words of its own takes: the next clause of its sentence that
/// has one ("火锅和烧烤，我都不太想吃"), else the previous one.
fn inherited(clauses: &[Clause], i: usize) -> Option<(bool, Strengths)> {
    clauses[i + 1..]
        .iter()
        .chain(clauses[..i].iter().rev())
        .find_map(Clause::stance)
}

/// Recognise the names, figures and words of one clause; `city` is the destination in context
/// (updated by the cities the clause names).
fn read_clause<'a>(
    sets: &[&'a Terms],
    any: &AnyKey,
    text: &'a str,
    city: &mut Option<&'a str>,
) -> Clause<'a> {
    let mut c = Clause::default();
    // what is left once names are taken out: the words and figures are read from it (a sight
    // named 不夜城 says no 不, 4A景区 holds no figure)
    let mut rest = String::with_capacity(text.len());
    // the start of the text not yet copied to `rest`
    let mut copied = 0;
    // each character decoded once, with the next one (a term's key is its first two)
    let mut chars = text.char_indices().peekable();
    while let Some((i, first)) = chars.next() {
        let second = chars.peek().map_or('\0', |&(_, c)| c);
        let tail = &text[i..];
        let found = any
            .may_start(first, second)
            .and_then(|key| recognise(sets, tail, key));
        let Some(found) = found else {
            continue;
        };
        let len = found.len;
        // a destination's name is read as the destination, also where a sight bears it
        // (峨眉山 the city and the mountain)
        if found.city.is_some() {
            *city = found.city;
        } else if !found.values.is_empty() {
            c.mentions.push(Mention {
                values: found.values,
                city: *city,
                said: &tail[..len],
            });
        }
        rest.push_str(&text[copied..i]);
        rest.push('|');
        copied = i + len;
        while chars.next_if(|&(j, _)| j < copied).is_some() {}
    }
    rest.push_str(&text[copied..]);
    let mut j = 0;
    while let Some(first) = rest[j..].chars().next() {
        let tail = &rest[j..];
        // most characters start neither: asked of the character first
        if let Some((len, m)) = words::may_start(first).then(|| marker_at(tail)).flatten() {
            c.stances.extend(m.stance);
            c.limit |= m.limit;
            j += len;
            continue;
        }
        let figure = figures::may_start(first).then(|| figure_at(tail, &rest));
        if let Some((len, f)) = figure.flatten() {
            c.figures.extend(f);
            j += len;
            continue;
        }
        j += first.len_utf8();
    }
    c
}

/// Resolve one mention against the speaker's table: the aspect it voices, or its issue.
fn mention(
    items: &[ListItem],
    values: &[String],
    city: Option<&str>,
    said: &str,
    stance: Option<(bool, Strengths)>,
) -> Result<&'static str, LineIssue> {
    // the table's items of the values said (most mentions stand for one or two)
    let all: smallvec::SmallVec<[&ListItem; 4]> = items
        .iter()
        .filter(|i| values.iter().any(|v| v == i.value))
        .collect();
    let Some(first) = all.first() else {
        return Err(LineIssue::NotInTable {
            item: said.to_string(),
        });
    };
    let subject = aspect_of_subject(first.field.spec().subject);
    let Some((wanted, strengths)) = stance else {
        return Ok(subject);
    };
    // the items of the city in context, when it has any (the context may be stale)
    let here = |i: &&ListItem| i.city.is_none() || city.is_some_and(|c| i.city == Some(c));
    let local = all.iter().filter(|i| here(i)).any(|i| i.city.is_some());
    let pool = || all.iter().filter(move |i| !local || here(i));
    let mut same = pool().filter(|i| i.field.spec().tier.positive() == wanted);
    let Some(item) = same.next() else {
        let field = pool().next().unwrap_or(first).field.spec().path;
        return Err(LineIssue::Stance {
            item: said.to_string(),
            wanted,
            field,
        });
    };
    let fits = |i: &ListItem| strengths.fit(i.field.spec().tier.strong());
    if fits(item) || same.any(|i| fits(i)) {
        return Ok(aspect_of_subject(item.field.spec().subject));
    }
    Err(LineIssue::Strength {
        item: said.to_string(),
        field: item.field.spec().path,
        firm: item.field.spec().tier.strong(),
    })
}

/// The terms of one city of the inventory, built once per validator.
fn city_terms<'v>(v: &'v Validator, city: &str) -> Option<&'v Terms> {
    let id = v.res.city_id(city)?;
    let cell = v.city_terms.get(id as usize)?;
    Some(cell.get_or_init(|| inventory_terms(v.res, id)))
}

pub(super) fn check(v: &Validator, t: &mut Task, _mode: Mode, out: &mut Outcome) {
    let mut known: Vec<&Terms> = vec![Terms::vocabularies()];
    known.extend(t.metadata.cities.iter().filter_map(|c| city_terms(v, c)));
    // each member's table walked once, for the task's terms and for the member's lines
    let items: Vec<Vec<ListItem>> = t
        .user_preferences
        .values()
        .map(|e| {
            let mut items = Vec::with_capacity(64);
            e.preference.list_items_into(&mut items);
            items
        })
        .collect();
    let tables = Terms::tables_beyond(items.iter().flatten().map(|i| i.value), &known);
    let mut sets = known;
    sets.insert(1, &tables);
    let any = AnyKey::of(&sets);
    for m in &t.initial_messages {
        let Some((i, _, entry)) = t.user_preferences.get_full(&m.role) else {
            continue;
        };
        for issue in check_line_items(&sets, &any, &entry.preference, &items[i], &m.content) {
            out.problems.push(finding(
                "lines",
                t,
                &m.role,
                "",
                "initial_messages",
                &issue.item(),
                issue.message(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::figures::{chinese_number, number_at};
    use super::*;
    use gtb_core::task::CityPref;

    /// A member with a budget, intensity, transport, hotels and one city (长沙市).
    fn table() -> Preference {
        let mut p = Preference::default();
        let g = &mut p.global_constraints;
        g.avg_budget = 4200;
        g.intensity.max_poi_per_day = 3;
        g.intensity.max_active_hours = 8;
        g.transport.must = vec!["高铁".into()];
        g.transport.avoid = vec!["火车".into()];
        g.hotel_preference.prefer = vec!["舒适型".into()];
        g.hotel_preference.avoid = vec!["豪华型".into()];
        let mut c = CityPref::default();
        c.attractions.must_visit = vec!["岳麓山".into()];
        c.attractions.reject_visit = vec!["长沙世界之窗".into()];
        c.attractions.category_pref.negative = vec!["寺庙".into()];
        c.food.must_eat = vec!["湘菜".into()];
        c.food.prefer_eat = vec!["奶茶/茶饮".into()];
        c.food.reject_eat = vec!["火锅".into()];
        p.city_specific_preferences.insert("长沙市".into(), c);
        p
    }

    fn check(line: &str) -> Vec<LineIssue> {
        let t = table();
        let tables = Terms::tables([&t]);
        let city = Terms::city("长沙市", ["岳麓山", "橘子洲", "长沙世界之窗"], [], &[]);
        check_line(&[Terms::vocabularies(), &tables, &city], &t, line)
    }

    #[test]
    fn lines_that_agree_with_their_table_pass() {
        for line in [
            "我这边人均不能超过 4200 元。这次一定要坐高铁，火车能避开最好。",
            "长沙的岳麓山我非去不可，长沙世界之窗就千万别安排了。",
            "住的话最好是舒适型，豪华型就算了吧。",
            "在长沙一定要吃湘菜！奶茶我比较想喝。火锅我绝对不吃，寺庙我不太想去……",
            "一天最多逛三个景点，每天活动时间不能超过8小时。",
            "每天景点不能超过3个，太赶我受不了。",
        ] {
            let issues = check(line);
            assert!(issues.is_empty(), "{line}: {issues:?}");
        }
    }

    #[test]
    fn issue20_contradictions_and_empty_lines_are_caught() {
        // a must said as a reject, a positive said as one to avoid, another member's sight
        assert!(matches!(
            check("岳麓山就千万别安排了，我坚决不去。")[..],
            [LineIssue::Stance { wanted: false, .. }]
        ));
        assert!(matches!(
            check("长沙能避开湘菜就避开吧。")[..],
            [LineIssue::Stance { .. }]
        ));
        assert!(matches!(
            check("橘子洲我一定要去！")[..],
            [LineIssue::NotInTable { .. }]
        ));
        // says nothing of the table
        assert_eq!(check("我正在聊天"), vec![LineIssue::Nothing]);
        assert_eq!(check("我愿为你送礼"), vec![LineIssue::Nothing]);
        // the wrong strength: a must worded mildly, a reject worded softly
        assert!(matches!(
            check("长沙最好能去岳麓山。")[..],
            [LineIssue::Strength { firm: true, .. }]
        ));
        assert!(matches!(
            check("火锅就算了吧。")[..],
            [LineIssue::Strength { firm: true, .. }]
        ));
        // figures that are not the speaker's, or not said as a limit
        assert!(matches!(
            check("我这边人均不能超过50000元。")[..],
            [LineIssue::Figure {
                said: 50000,
                table: 4200,
                ..
            }]
        ));
        assert!(matches!(
            check("预算4200元左右。")[..],
            [LineIssue::FigureWording { .. }]
        ));
        // five aspects in one line
        let many = "人均不能超过4200元。每天不能超过8小时。一定要坐高铁。住宿最好是舒适型。岳麓山非去不可。";
        assert_eq!(check(many), vec![LineIssue::TooMany { aspects: 5 }]);
    }

    #[test]
    fn a_city_is_context_for_its_sentence_only() {
        let mut t = table();
        let mut other = CityPref::default();
        other.food.prefer_eat = vec!["火锅".into()];
        t.city_specific_preferences.insert("凤凰县".into(), other);
        let tables = Terms::tables([&t]);
        let cs = Terms::city("长沙市", ["岳麓山"], [], &[]);
        let fh = Terms::city("凤凰县", ["凤凰古城"], [], &[]);
        let sets = [Terms::vocabularies(), &tables, &cs, &fh];
        // 火锅 is rejected in 长沙, preferred in 凤凰
        assert!(check_line(&sets, &t, "凤凰最好能吃火锅。").is_empty());
        assert!(check_line(&sets, &t, "长沙的火锅我绝对不吃。").is_empty());
        assert!(!check_line(&sets, &t, "长沙最好能吃火锅。").is_empty());
        // no city in the sentence: any city's tier may be meant
        assert!(check_line(&sets, &t, "凤凰一定要吃湘菜。火锅我绝对不吃。").is_empty());
    }

    #[test]
    fn numbers_in_digits_and_chinese() {
        assert_eq!(number_at("4,200元"), Some((4200, 5)));
        assert_eq!(number_at("1.5万"), Some((15000, 6)));
        assert_eq!(chinese_number("两千五百元").map(|x| x.0), Some(2500));
        assert_eq!(chinese_number("十二个").map(|x| x.0), Some(12));
        assert_eq!(chinese_number("三个景点").map(|x| x.0), Some(3));
        assert_eq!(chinese_number("一万").map(|x| x.0), Some(10000));
        assert_eq!(number_at("元"), None);
    }
}
