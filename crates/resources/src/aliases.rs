//! The alias table (`raw_data/aliases.csv`): other names under which an inventory attraction
//! is known. The validator's name index and the LLM reply parser both resolve through it
//! (`validate::names::CityNames`), so a release task naming 黄果树风景名胜区 or 南山寺 finds
//! 黄果树瀑布 and 南山文化旅游区.

use super::table::{InputError, Row, read_csv};
use super::{Attraction, CityId};
use crate::names::normalize;
use std::collections::HashMap;
use std::path::Path;

/// How an alias relates to the attraction it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AliasKind {
    /// the official long name (5A / scenic-area register): 黄果树风景名胜区 -> 黄果树瀑布
    Official,
    /// a common, former or short name: 大慈恩寺 -> 大雁塔
    Common,
    /// a named place inside the attraction, not a row of its own: 南山寺 -> 南山文化旅游区
    PartOf,
}

impl AliasKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "official" => Some(Self::Official),
            "common" => Some(Self::Common),
            "part_of" => Some(Self::PartOf),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Official => "official",
            Self::Common => "common",
            Self::PartOf => "part_of",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Alias {
    pub alias: String,
    /// the inventory name it resolves to
    pub name: String,
    pub kind: AliasKind,
}

/// Read the alias table, checked against the loaded attractions: the city must be known, the
/// target an attraction of that city, the alias no attraction's own name there (it would shadow
/// it) and not given twice.
pub fn load(
    file: &Path,
    city_index: &gtb_core::FastMap<String, CityId>,
    attractions: &[Vec<Attraction>],
) -> Result<Vec<Vec<Alias>>, InputError> {
    let mut out: Vec<Vec<Alias>> = vec![Vec::new(); attractions.len()];
    let rows = read_csv(file, |r| {
        let city = super::check_city(r, city_index)?;
        Ok((r.line(), city, alias_row(r, &attractions[city as usize])?))
    })?;
    let mut seen: HashMap<(CityId, String), u64> = HashMap::new();
    for (line, city, a) in rows {
        if let Some(first) = seen.insert((city, normalize(&a.alias)), line) {
            return Err(InputError {
                file: file.to_path_buf(),
                line,
                field: "alias".into(),
                message: format!("{:?} is already an alias on line {first}", a.alias),
            });
        }
        out[city as usize].push(a);
    }
    Ok(out)
}

fn alias_row(r: &Row, list: &[Attraction]) -> Result<Alias, InputError> {
    let alias = r.text("alias")?;
    let name = r.text("name")?;
    let kind_s = r.text("kind")?;
    let kind = AliasKind::parse(&kind_s).ok_or_else(|| {
        r.err(
            "kind",
            format!("must be official, common or part_of, got {kind_s:?}"),
        )
    })?;
    if !list.iter().any(|a| a.name == name) {
        return Err(r.err(
            "name",
            format!("{name:?} is not an attraction of {}", r.str("city")?),
        ));
    }
    let na = normalize(&alias);
    if let Some(a) = list.iter().find(|a| normalize(&a.name) == na) {
        return Err(r.err(
            "alias",
            format!("{alias:?} is the attraction {:?} itself", a.name),
        ));
    }
    Ok(Alias { alias, name, kind })
}
