//! The network between executor and provider: latency, loss and duplication of each message.

use super::faults::Faults;
use crate::model::NetworkModel;
use crate::sim::{Chooser, ChooserExt, Millis, Purpose};
use crate::vocab::ids::AttemptId;

/// What happens to one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transit {
    /// Lost; `scripted` when a model fault dropped it.
    Lost { scripted: bool },
    /// Delivered after this latency, and a second time after the other one if duplicated.
    Delivered {
        latency_ms: Millis,
        duplicate_ms: Option<Millis>,
    },
    /// A reply that never arrives: the connection is reset when it would have.
    Reset { latency_ms: Millis },
}

#[derive(Clone, Debug)]
pub struct Network {
    config: NetworkModel,
}

impl Network {
    pub fn new(config: NetworkModel) -> Self {
        Self { config }
    }

    fn latency(&self, ch: &mut dyn Chooser) -> Millis {
        let l = self.config.latency_ms;
        ch.between(Purpose::Latency, l.min, l.max)
    }

    /// A request of `attempt` on its way to the provider.
    pub(crate) fn request(
        &self,
        attempt: AttemptId,
        faults: &Faults,
        ch: &mut dyn Chooser,
    ) -> Transit {
        if faults.drops_request(attempt) {
            return Transit::Lost { scripted: true };
        }
        if ch.chance(Purpose::RequestLoss, self.config.request_loss) {
            return Transit::Lost { scripted: false };
        }
        let latency_ms = self.latency(ch);
        let duplicate_ms = ch
            .chance(Purpose::Duplicate, self.config.duplicate)
            .then(|| self.latency(ch));
        Transit::Delivered {
            latency_ms,
            duplicate_ms,
        }
    }

    /// A reply to `attempt` on its way back.
    pub(crate) fn reply(
        &self,
        attempt: AttemptId,
        faults: &Faults,
        ch: &mut dyn Chooser,
    ) -> Transit {
        if faults.drops_reply(attempt) {
            return Transit::Lost { scripted: true };
        }
        if ch.chance(Purpose::ReplyLoss, self.config.reply_loss) {
            return Transit::Lost { scripted: false };
        }
        let latency_ms = self.latency(ch);
        if ch.chance(Purpose::ConnectionReset, self.config.connection_reset) {
            return Transit::Reset { latency_ms };
        }
        Transit::Delivered {
            latency_ms,
            duplicate_ms: None,
        }
    }
}
