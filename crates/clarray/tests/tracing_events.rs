//! With the `tracing` feature, a subscriber sees clarray's spans and events: a program build,
//! a kernel launch, the commands enqueued and the memory pool. Alone in its test binary: a
//! subscriber set for one thread (`with_default`) misses events whose callsites other tests'
//! threads registered at the same time without one.
#![cfg(feature = "tracing")]

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A subscriber that keeps the names of the spans made and the messages of the events.
#[derive(Default, Clone)]
struct Seen {
    spans: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<String>>>,
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Seen {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.spans.lock().unwrap();
        spans.push(span.metadata().name().to_string());
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        self.events.lock().unwrap().push(m.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_subscriber_sees_builds_commands_and_the_pool() {
    let ctx = clarray::Context::new().unwrap();
    let seen = Seen::default();
    tracing::subscriber::with_default(seen.clone(), || {
        // Other tests' threads may have registered these callsites with no subscriber in
        // place (interest "never"): ask every callsite again now that one is.
        tracing::callsite::rebuild_interest_cache();
        let src = "kernel void k(global int* o) { o[get_global_id(0)] = 7; }";
        let k = clarray::runtime::Program::build(&ctx, src, "").unwrap().kernel("k").unwrap();
        let b = clarray::memory::alloc(&ctx, 64).unwrap();
        k.launch(ctx.queue(), 16, (&b,)).unwrap();
        let mut out = [0i32; 16];
        ctx.queue().read_buffer(&b, 0, &mut out).unwrap();
        assert_eq!(out, [7; 16]);
    });
    let spans = seen.spans.lock().unwrap();
    let events = seen.events.lock().unwrap();
    assert!(spans.iter().any(|s| s == "clarray.build"), "{spans:?}");
    for want in ["clarray.launch", "clarray.command", "clarray.pool."] {
        assert!(events.iter().any(|e| e.starts_with(want)), "no `{want}` in {events:?}");
    }
    // Two commands: the launch and the read.
    assert_eq!(events.iter().filter(|e| *e == "clarray.command").count(), 2, "{events:?}");
}
