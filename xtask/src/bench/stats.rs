//! Order statistics and the A/B comparison of whole-process figures.

/// One figure measured on the runtime under test (A) and, with `--peer`, on the peer (B),
/// sample by sample in alternating runs, so `a[i]` and `b[i]` were taken back to back.
pub(super) struct Figure {
    pub name: String,
    pub unit: &'static str,
    /// The limit the median of A should stay under, and how the report shows it.
    pub target: Option<(f64, String)>,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
}

impl Figure {
    pub(super) fn new(
        name: impl Into<String>,
        unit: &'static str,
        target: Option<(f64, &str)>,
    ) -> Self {
        Self {
            name: name.into(),
            unit,
            target: target.map(|(limit, label)| (limit, label.to_owned())),
            a: Vec::new(),
            b: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, side: Side, value: f64) {
        match side {
            Side::A => self.a.push(value),
            Side::B => self.b.push(value),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    A,
    B,
}

/// min / median / max of a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

pub(super) fn summary(values: &[f64]) -> Option<Summary> {
    let sorted = sorted(values);
    Some(Summary {
        n: sorted.len(),
        min: *sorted.first()?,
        median: percentile(&sorted, 50.0)?,
        max: *sorted.last()?,
    })
}

/// The A/B ratio of each pair taken back to back, summarised; `None` without pairs.
pub(super) fn ratios(a: &[f64], b: &[f64]) -> Option<Summary> {
    let pairs: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(_, b)| **b > 0.0)
        .map(|(a, b)| a / b)
        .collect();
    summary(&pairs)
}

pub(super) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// Nearest-rank percentile of an already sorted sample.
pub(super) fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(50.0));
        assert_eq!(percentile(&values, 99.0), Some(99.0));
        assert_eq!(percentile(&values, 100.0), Some(100.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn ratios_pair_samples_in_order() {
        let summary = ratios(&[2.0, 9.0, 4.0], &[1.0, 3.0, 4.0]);
        assert_eq!(
            summary,
            Some(Summary {
                n: 3,
                min: 1.0,
                median: 2.0,
                max: 3.0
            })
        );
    }
}
