//! Read-backs: what a lookup by key, by resource id or by search shows at an instant, where
//! a committed effect becomes visible only after the model's index lag.

use super::*;

impl Provider {
    fn visible(&self, resource: ResourceId, now: Millis) -> bool {
        self.resources
            .get(resource.0 as usize)
            .is_some_and(|r| r.visible_at_ms <= now)
    }

    /// A lookup by key. The key record answers while it is kept: its resource once visible,
    /// "pending" while its work is unfinished. A record past retention (or an in-progress one
    /// past its expiry) is gone for the lookup as it is for deduplication, and a record never
    /// written or deleted leaves nothing, unless the key is an attribute of the resource: then
    /// the oldest visible resource created under the key is found whatever became of it.
    pub(super) fn lookup_key(&self, now: Millis, scoped: &ScopedKey) -> Reply {
        if let Some(&r) = self
            .labelled
            .get(scoped)
            .and_then(|rs| rs.iter().find(|&&r| self.visible(r, now)))
        {
            return Reply::Found { resource: r };
        }
        let kept = self.store.get(scoped).filter(|r| {
            !expired(&self.config, r, now) && !in_progress_expired(&self.config, r, now)
        });
        match kept.map(|r| r.slot) {
            Some(Slot::Done {
                resource: Some(r), ..
            }) if self.visible(r, now) => Reply::Found { resource: r },
            Some(Slot::InFlight { .. } | Slot::Orphaned) => Reply::Pending,
            _ => Reply::NotFound,
        }
    }

    pub(super) fn lookup(&self, now: Millis, request: &Request, query: LookupQuery) -> Reply {
        let found = |r: ResourceId| {
            if self.visible(r, now) {
                Reply::Found { resource: r }
            } else {
                Reply::NotFound
            }
        };
        if let LookupQuery::Operation(handle) = query {
            // The status monitor reports an effect once it is visible, and "running" until.
            return match self.jobs.get(handle as usize).and_then(|j| j.outcome) {
                Some((_, Some(resource))) if self.visible(resource, now) => {
                    Reply::Found { resource }
                }
                Some((_, None)) => Reply::OperationFailed,
                _ => Reply::Pending,
            };
        }
        match (self.config.lookup, query) {
            (Lookup::ByKey, LookupQuery::Key(key)) => {
                self.lookup_key(now, &self.scope(request, key))
            }
            (Lookup::ByResourceId, LookupQuery::Resource(r)) => {
                match self.resources.get(r.0 as usize) {
                    Some(res) if res.tenant == request.tenant => found(r),
                    _ => Reply::NotFound,
                }
            }
            (Lookup::Search, LookupQuery::Search { params }) => self
                .resources
                .iter()
                .enumerate()
                .find(|(_, r)| {
                    r.tenant == request.tenant
                        && r.endpoint == request.endpoint
                        && r.params == params
                        && r.visible_at_ms <= now
                })
                .map_or(Reply::NotFound, |(i, _)| Reply::Found {
                    resource: ResourceId(i as u32),
                }),
            _ => Reply::Unsupported,
        }
    }
}
