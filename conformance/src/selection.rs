//! Which scenarios a run executes: `--tags`, `--name` and `--shard i/n`, all of which must
//! agree (cucumber's own CLI applies only one of tags and name, so the kit filters itself).
//!
//! Sharding is by a stable hash of the scenario's place (`<dir>/<file>.feature:<line>`, an
//! outline row counting as its own scenario): the same scenario lands in the same shard on
//! every machine and run, shards are disjoint, and together they are the whole selection.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use anyhow::Context;
use cucumber::feature::Ext as _;
use cucumber::gherkin::tagexpr::TagOperation;
use cucumber::gherkin::{Feature, GherkinEnv, Rule, Scenario};
use cucumber::tag::Ext as _;
use regex::Regex;

/// `--shard i/n`: the i-th of n disjoint parts (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("a shard is written i/n, e.g. 2/4, not {text:?}"))?;
        let parse = |part: &str| part.trim().parse::<u32>().ok();
        match (parse(index), parse(count)) {
            (Some(index), Some(count)) if count >= 1 && (1..=count).contains(&index) => {
                Ok(Shard { index, count })
            }
            _ => Err(format!(
                "shard {text:?} is not i/n with 1 <= i <= n (e.g. 1/4 … 4/4)"
            )),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the scenario at `place` belongs to this shard.
    pub fn holds(&self, place: &str) -> bool {
        let hash = place.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        hash % u64::from(self.count) == u64::from(self.index - 1)
    }
}

/// The combined filter.
#[derive(Debug)]
pub(crate) struct Selection {
    root: std::path::PathBuf,
    tags: Option<TagOperation>,
    name: Option<Regex>,
    shard: Option<Shard>,
    /// The requirements of the profiles the runtime declares; a scenario runs only when it
    /// certifies at least one of them (`None`: every scenario applies).
    applicable: Option<std::collections::BTreeSet<String>>,
}

impl Selection {
    /// Keeps only scenarios tagged with one of `requirements` (the declared profiles').
    pub(crate) fn applicable_to(
        mut self,
        requirements: std::collections::BTreeSet<String>,
    ) -> Self {
        self.applicable = Some(requirements);
        self
    }

    pub(crate) fn new(
        features: &Path,
        tags: Option<&str>,
        name: Option<&str>,
        shard: Option<Shard>,
    ) -> anyhow::Result<Self> {
        let tags = tags
            .map(|expr| {
                TagOperation::from_str(expr)
                    .map_err(|e| anyhow::anyhow!("invalid tag expression {expr:?}: {e}"))
            })
            .transpose()?;
        let name = name
            .map(|re| Regex::new(re).with_context(|| format!("invalid --name regex {re:?}")))
            .transpose()?;
        Ok(Self {
            root: features.to_path_buf(),
            tags,
            name,
            shard,
            applicable: None,
        })
    }

    /// `<dir>/<file>.feature:<line>` relative to the features directory.
    fn place(&self, feature: &Feature, scenario: &Scenario) -> String {
        let path = feature
            .path
            .as_deref()
            .map(|p| {
                p.strip_prefix(&self.root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .unwrap_or_default();
        format!("{path}:{}", scenario.position.line)
    }

    pub(crate) fn selects(
        &self,
        feature: &Feature,
        rule: Option<&Rule>,
        scenario: &Scenario,
    ) -> bool {
        let tags = feature
            .tags
            .iter()
            .chain(rule.iter().flat_map(|r| &r.tags))
            .chain(scenario.tags.iter());
        let applies = self.applicable.as_ref().is_none_or(|ids| {
            tags.clone()
                .any(|tag| ids.contains(tag.trim_start_matches('@')))
        });
        applies
            && self.tags.as_ref().is_none_or(|op| op.eval(tags))
            && self
                .name
                .as_ref()
                .is_none_or(|re| re.is_match(&scenario.name))
            && self
                .shard
                .is_none_or(|shard| shard.holds(&self.place(feature, scenario)))
    }

    /// How many scenarios (outline rows expanded, as cucumber runs them) the selection
    /// takes from the feature files under the root; for progress and for an empty selection.
    pub(crate) fn count(&self) -> anyhow::Result<usize> {
        let mut files = Vec::new();
        collect(&self.root, &mut files)?;
        let mut count = 0;
        for file in files {
            // A file cucumber cannot parse is reported by cucumber itself; count nothing.
            let Ok(feature) = Feature::parse_path(&file, GherkinEnv::default()) else {
                continue;
            };
            let Ok(feature) = feature.expand_examples() else {
                continue;
            };
            count += feature
                .scenarios
                .iter()
                .filter(|s| self.selects(&feature, None, s))
                .count();
            for rule in &feature.rules {
                count += rule
                    .scenarios
                    .iter()
                    .filter(|s| self.selects(&feature, Some(rule), s))
                    .count();
            }
        }
        Ok(count)
    }
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("feature"))
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split_disjointly() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        let places: Vec<String> = (1..200)
            .map(|l| format!("rpc/framing.feature:{l}"))
            .collect();
        let mut sizes = [0; 3];
        for place in &places {
            let holders: Vec<usize> = (0..3).filter(|&i| shards[i].holds(place)).collect();
            assert_eq!(holders.len(), 1, "{place} is in exactly one shard");
            sizes[holders[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| n > 40), "roughly balanced: {sizes:?}");
    }

    #[test]
    fn tags_name_and_shard_combine() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.feature"),
            "Feature: f\n\n  @REQ-A-001\n  Scenario: alpha\n    Given x\n\n  @REQ-A-002\n  Scenario: beta\n    Given x\n\n  @REQ-A-001\n  Scenario Outline: gamma <n>\n    Given <n>\n\n    Examples:\n      | n |\n      | 1 |\n      | 2 |\n",
        )
        .unwrap();
        let count = |tags: Option<&str>, name: Option<&str>, shard: Option<Shard>| {
            Selection::new(dir.path(), tags, name, shard)
                .unwrap()
                .count()
                .unwrap()
        };
        assert_eq!(count(None, None, None), 4);
        assert_eq!(count(Some("@REQ-A-001"), None, None), 3);
        assert_eq!(count(Some("@REQ-A-001"), Some("^gamma"), None), 2);
        let halves: Vec<usize> = (1..=2)
            .map(|index| count(None, None, Some(Shard { index, count: 2 })))
            .collect();
        assert_eq!(halves.iter().sum::<usize>(), 4);
    }
}
