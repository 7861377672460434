//! Counting the exchanges of the plan that runs.

use crate::details::{Partitioning, ShuffleOrigin};
use crate::model::Plan;
use crate::operator::Operator;

/// The three kinds of exchange the plan JSON counts separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeKind {
    /// A shuffle: `Exchange`, or a Photon shuffle map stage that is not `EXECUTOR_BROADCAST`.
    Shuffle,
    /// A broadcast: `BroadcastExchange`, `PhotonBroadcastExchange`, or a Photon
    /// `EXECUTOR_BROADCAST` shuffle map stage.
    Broadcast,
    /// `ReusedExchange`: reads the output of another exchange, runs no exchange itself.
    Reused,
}

/// One exchange of the plan that runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExchangeInfo<'a> {
    /// Index of the exchange node in [`Plan::nodes`].
    pub node: usize,
    /// Its kind.
    pub kind: ExchangeKind,
    /// The partitioning (for Photon: taken from the `PhotonShuffleExchangeSink` child).
    pub partitioning: Option<&'a Partitioning>,
    /// Why the shuffle exists, when printed.
    pub origin: Option<&'a ShuffleOrigin>,
    /// The user asked for this shuffle (`repartition`, `DISTRIBUTE BY`, `REBALANCE`).
    pub user_requested: bool,
    /// For a `ReusedExchange`: the index of the exchange it reuses, when that id is in the plan.
    pub reuses: Option<usize>,
}

impl Plan {
    /// Every exchange of the plan that runs ([`Plan::running_nodes`]): the Final/Current (or
    /// only) tree, subqueries and optimized-out sub-plans, each operator id once; the AQE
    /// Initial Plan printed next to a Final/Current plan is left out.
    pub fn exchange_infos(&self) -> Vec<ExchangeInfo<'_>> {
        self.running_nodes()
            .into_iter()
            .filter_map(|idx| self.exchange_info(idx))
            .collect()
    }

    /// Describes node `idx` if it is an exchange.
    pub fn exchange_info(&self, idx: usize) -> Option<ExchangeInfo<'_>> {
        let node = self.nodes.get(idx)?;
        let kind = match node.operator {
            Operator::Exchange => ExchangeKind::Shuffle,
            Operator::BroadcastExchange => ExchangeKind::Broadcast,
            Operator::ReusedExchange => ExchangeKind::Reused,
            _ => return None,
        };
        let mut partitioning = node.details.partitioning.as_deref();
        if partitioning.is_none() && node.photon {
            partitioning = node
                .children
                .iter()
                .filter_map(|&c| self.nodes.get(c))
                .find(|c| c.operator == Operator::ShuffleSink)
                .and_then(|c| c.details.partitioning.as_deref());
        }
        let origin = node.details.shuffle_origin.as_ref();
        let reuses = node
            .details
            .reuses_operator_id
            .and_then(|target| self.nodes.iter().position(|n| n.id == Some(target)));
        Some(ExchangeInfo {
            node: idx,
            kind,
            partitioning,
            origin,
            user_requested: kind == ExchangeKind::Shuffle
                && origin.is_some_and(ShuffleOrigin::is_user_requested),
            reuses,
        })
    }

    /// Shuffle exchanges of the plan that runs (R1): `Exchange` nodes, Photon shuffle map
    /// stages that are not executor broadcasts; not `BroadcastExchange`, not `ReusedExchange`.
    pub fn exchanges(&self) -> usize {
        self.count(ExchangeKind::Shuffle)
    }

    /// Broadcast exchanges of the plan that runs.
    pub fn broadcast_exchanges(&self) -> usize {
        self.count(ExchangeKind::Broadcast)
    }

    /// `ReusedExchange` nodes of the plan that runs.
    pub fn reused_exchanges(&self) -> usize {
        self.count(ExchangeKind::Reused)
    }

    /// The shuffles the user asked for (`REPARTITION_BY_COL`, `REPARTITION_BY_NUM`,
    /// `REBALANCE_*`, 3.1's `REPARTITION*`, 3.0's `noUserSpecifiedNumPartition=false`).
    pub fn user_requested_exchanges(&self) -> Vec<ExchangeInfo<'_>> {
        self.exchange_infos()
            .into_iter()
            .filter(|e| e.user_requested)
            .collect()
    }

    fn count(&self, kind: ExchangeKind) -> usize {
        self.exchange_infos()
            .iter()
            .filter(|e| e.kind == kind)
            .count()
    }
}
