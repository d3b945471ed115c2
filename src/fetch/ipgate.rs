//! Politeness per IP address across every fetch of a process (docs/design.md §7).
//!
//! A partition's scheduler keeps `[fetch] per_ip_connections` for the hosts of *its* partition,
//! but many hosts share an address (virtual hosting, CDNs), and the host-hash partitioning puts
//! them in different partitions: the local executor fetches several partitions at once, and
//! without a shared count each would open its own connections to the same server. An [`IpGate`]
//! is that shared count: `dragnet cycle` makes one per cycle and hands it to every fetch it
//! runs; a fetch run on its own (`dragnet fetch`, one Slurm task) makes its own. Before each
//! request a worker takes a permit for the host's address ([`IpGate::acquire`]), waiting while
//! `per_ip_connections` requests to it are in flight or until `per_ip_delay_secs` have passed
//! since the last one to it ended; dropping the permit ends the request.
//!
//! Under Slurm each task is its own process on its own node: the gate holds per task, so a
//! cluster of n nodes may have n x `per_ip_connections` connections to one address at worst
//! (README, "Slurm"). Waiting is bounded by the stage's deadline like everything else: a worker
//! waits at most until then, and the request goes ahead (the deadline defers the rest).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Requests in flight, the earliest next start and the threads waiting, per address.
#[derive(Default)]
struct Slot {
    active: usize,
    next: Option<Instant>,
    /// Threads waiting for this address: a release wakes one of them, not every waiter of every
    /// address.
    waiting: usize,
    freed: Arc<Condvar>,
}

/// The per-IP limits shared by the fetches of one process (see the module docs).
pub struct IpGate {
    limit: usize,
    delay: Duration,
    slots: Mutex<HashMap<IpAddr, Slot>>,
}

impl std::fmt::Debug for IpGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpGate")
            .field("limit", &self.limit)
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// A request to an address in flight; dropping it ends the request.
pub struct IpPermit<'a> {
    gate: &'a IpGate,
    ip: IpAddr,
}

impl IpGate {
    /// A gate allowing `limit` requests at once per address (at least 1), each starting at least
    /// `delay` after the previous one to the address ended.
    pub fn new(limit: u32, delay: Duration) -> Arc<IpGate> {
        Arc::new(IpGate {
            limit: (limit as usize).max(1),
            delay,
            slots: Mutex::new(HashMap::new()),
        })
    }

    /// Waits until a request to `ip` may start (or until `deadline`: then it starts anyway),
    /// and counts it in flight.
    pub fn acquire(&self, ip: IpAddr, deadline: Instant) -> IpPermit<'_> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let slot = slots.entry(ip).or_default();
            let wait_until = slot.next.filter(|&t| t > now);
            if (slot.active < self.limit && wait_until.is_none()) || now >= deadline {
                slot.active += 1;
                return IpPermit { gate: self, ip };
            }
            // Woken when a permit of this address is dropped, or when the delay is over.
            let until = wait_until.unwrap_or(deadline).min(deadline);
            let timeout = until
                .saturating_duration_since(now)
                .max(Duration::from_millis(1));
            slot.waiting += 1;
            let freed = Arc::clone(&slot.freed);
            slots = freed
                .wait_timeout(slots, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if let Some(slot) = slots.get_mut(&ip) {
                slot.waiting -= 1;
            }
        }
    }
}

impl Drop for IpPermit<'_> {
    fn drop(&mut self) {
        let mut slots = self.gate.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = slots.get_mut(&self.ip) {
            slot.active = slot.active.saturating_sub(1);
            let next = Instant::now() + self.gate.delay;
            slot.next = Some(slot.next.map_or(next, |t| t.max(next)));
            if slot.waiting > 0 {
                slot.freed.notify_one();
            } else if slot.active == 0 && self.gate.delay.is_zero() {
                slots.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn at_most_limit_in_flight_and_the_delay_between() {
        let gate = IpGate::new(2, Duration::from_millis(5));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let active = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let far = Instant::now() + Duration::from_secs(30);
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    for _ in 0..5 {
                        let _p = gate.acquire(ip, far);
                        let n = active.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(n, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(2));
                        active.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) <= 2);
        // One at a time with a delay: starts at least the delay after the previous end.
        let gate = IpGate::new(1, Duration::from_millis(30));
        let t = Instant::now();
        drop(gate.acquire(ip, far));
        drop(gate.acquire(ip, far));
        drop(gate.acquire(ip, far));
        assert!(t.elapsed() >= Duration::from_millis(60));
        // The deadline ends any wait.
        let _held = gate.acquire(ip, far);
        let soon = Instant::now() + Duration::from_millis(20);
        let _anyway = gate.acquire(ip, soon);
        assert!(Instant::now() >= soon);
    }
}
