//! The one duplicate check of a dataset: which instance ids have been seen, and where first.
//!
//! Loading, validation and conversion all ask [`Seen`], so a repeated id is found the same way
//! and said the same way ([`Duplicate`]: the id, its first location and the second) whoever
//! reads the dataset. It holds no record, only a fixed-size digest of each id and the id's first
//! location, so streaming a dataset of any length keeps memory to one small entry per id.

use super::location::Location;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use thiserror::Error;

/// An `instance_id` met a second time.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("duplicate instance_id `{id}`: {first} and {second}")]
pub struct Duplicate {
    /// The shared instance id.
    pub id: String,
    /// Where the id was first seen.
    pub first: Location,
    /// Where it was seen again.
    pub second: Location,
}

/// The instance ids seen so far, each with where it was first seen.
///
/// Ids are kept as the first 128 bits of their SHA-256 digest rather than as strings: memory per
/// id does not grow with the id's length, and two different ids would need a 128-bit collision
/// to be taken for one.
#[derive(Debug, Default)]
pub struct Seen {
    first: HashMap<u128, Location>,
}

impl Seen {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers `id` as seen at `at`; if it was seen before, the [`Duplicate`] naming both
    /// places (the first place stays the one remembered).
    pub fn check(&mut self, id: &str, at: &Location) -> Result<(), Duplicate> {
        use std::collections::hash_map::Entry;
        match self.first.entry(digest(id)) {
            Entry::Occupied(first) => Err(Duplicate {
                id: id.to_owned(),
                first: first.get().clone(),
                second: at.clone(),
            }),
            Entry::Vacant(slot) => {
                slot.insert(at.clone());
                Ok(())
            }
        }
    }

    /// How many distinct ids have been seen.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// Whether no id has been seen yet.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

/// The first 128 bits of the id's SHA-256 digest.
fn digest(id: &str) -> u128 {
    let hash = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 16];
    first.copy_from_slice(&hash[..16]);
    u128::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn line(n: u64) -> Location {
        Location::Line {
            file: Path::new("data.jsonl").into(),
            line: n,
        }
    }

    #[test]
    fn a_repeated_id_names_its_first_and_second_place() {
        let mut seen = Seen::new();
        assert!(seen.check("a_b_pr1", &line(1)).is_ok());
        assert!(seen.check("a_b_pr2", &line(2)).is_ok());
        let dup = seen.check("a_b_pr1", &line(5)).unwrap_err();
        assert_eq!(dup.first, line(1));
        assert_eq!(dup.second, line(5));
        assert_eq!(
            dup.to_string(),
            "duplicate instance_id `a_b_pr1`: data.jsonl:1 and data.jsonl:5"
        );
        // A third copy still names the first place.
        let again = seen.check("a_b_pr1", &line(9)).unwrap_err();
        assert_eq!(again.first, line(1));
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn ids_differing_only_in_case_are_different() {
        let mut seen = Seen::new();
        assert!(seen.is_empty());
        assert!(seen.check("A_b_pr1", &line(1)).is_ok());
        assert!(seen.check("a_b_pr1", &line(2)).is_ok());
    }

    #[test]
    fn task_directories_are_named_as_they_are() {
        let mut seen = Seen::new();
        let dir = |d: &str| Location::TaskDir(Path::new(d).into());
        seen.check("x", &dir("tasks/x")).unwrap();
        let dup = seen.check("x", &dir("tasks/x-copy")).unwrap_err();
        assert_eq!(
            dup.to_string(),
            "duplicate instance_id `x`: tasks/x and tasks/x-copy"
        );
    }
}
