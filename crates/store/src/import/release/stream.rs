//! The serde visitors that stream the file: the top-level map of cities, each city's list
//! of POIs, and the skipping of cities outside `--cities`.

use super::fields::describe;
use super::{CityKey, Importer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The top level: city -> list of POIs.
pub(super) struct FileVisitor<'i, 'a, 'c>(pub(super) &'i mut Importer<'a, 'c>);

impl<'de> Visitor<'de> for FileVisitor<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object mapping city names to lists of POIs")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let city = self.0.city(key);
            if self.0.out.wants(&city.name) {
                map.next_value_seed(CitySeed {
                    imp: &mut *self.0,
                    city,
                })?;
            } else {
                let n = map.next_value_seed(Skip)?;
                self.0.out.skip_outside(n);
            }
        }
        Ok(())
    }
}

/// One city's list, POI by POI.
struct CitySeed<'i, 'a, 'c> {
    imp: &'i mut Importer<'a, 'c>,
    city: CityKey,
}

impl<'de> DeserializeSeed<'de> for CitySeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl CitySeed<'_, '_, '_> {
    fn not_a_list(self, what: String) {
        let why = format!(
            "the value of city {:?} is {what}, not a list of POIs",
            self.city.key
        );
        self.imp.report(&self.city, None, "", "not a list", why);
    }
}

impl<'de> Visitor<'de> for CitySeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of POI objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(v) = seq.next_element::<Value>()? {
            self.imp.poi(&self.city, i, v);
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.not_a_list("an object".into());
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.not_a_list(describe(&Value::String(v.into())));
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.not_a_list(v.to_string());
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.not_a_list("null".into());
        Ok(())
    }
}

/// Reads past a city outside `--cities` without building its POIs; the number of entries.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = u64;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        let mut n = 0;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(0)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<u64, E> {
        Ok(0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
        Ok(0)
    }
}
