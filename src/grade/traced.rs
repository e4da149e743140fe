//! A [`Sandbox`] that reports what it does: each container started, committed and removed, as
//! `debug` tracing events (`-vv`), around any backend. It adds nothing else and changes nothing.

use crate::sandbox::{ContainerSpec, ContainerState, ExecOutput, ExecSpec, Sandbox, SandboxError};
use std::collections::BTreeMap;

/// Wraps a sandbox; the grading commands grade through it.
#[derive(Debug)]
pub struct Traced<'a, S>(pub &'a S);

impl<S: Sandbox> Sandbox for Traced<'_, S> {
    type Handle = S::Handle;

    async fn image_id(&self, image: &str) -> Result<Option<String>, SandboxError> {
        self.0.image_id(image).await
    }

    async fn start(&self, spec: &ContainerSpec) -> Result<S::Handle, SandboxError> {
        let started = self.0.start(spec).await;
        match &started {
            Ok(c) => {
                tracing::debug!(image = spec.image.as_str(), container = ?c, "container started")
            }
            Err(e) => {
                tracing::debug!(image = spec.image.as_str(), error = %e, "container did not start")
            }
        }
        started
    }

    async fn exec(
        &self,
        container: &S::Handle,
        spec: &ExecSpec,
    ) -> Result<ExecOutput, SandboxError> {
        self.0.exec(container, spec).await
    }

    async fn upload(
        &self,
        container: &S::Handle,
        dir: &str,
        tar: Vec<u8>,
    ) -> Result<(), SandboxError> {
        self.0.upload(container, dir, tar).await
    }

    async fn upload_stream(
        &self,
        container: &S::Handle,
        dir: &str,
        produce: crate::sandbox::TarProducer,
    ) -> Result<(), SandboxError> {
        self.0.upload_stream(container, dir, produce).await
    }

    async fn download(
        &self,
        container: &S::Handle,
        path: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, SandboxError> {
        self.0.download(container, path, max_bytes).await
    }

    async fn state(&self, container: &S::Handle) -> Result<ContainerState, SandboxError> {
        self.0.state(container).await
    }

    async fn commit(
        &self,
        container: &S::Handle,
        tag: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<String, SandboxError> {
        let id = self.0.commit(container, tag, labels).await;
        if id.is_ok() {
            tracing::debug!(container = ?container, image = tag, "prepared image committed");
        }
        id
    }

    async fn touch_image(&self, tag: &str) -> Result<(), SandboxError> {
        self.0.touch_image(tag).await
    }

    async fn remove(&self, container: &S::Handle) -> Result<(), SandboxError> {
        let removed = self.0.remove(container).await;
        match &removed {
            Ok(()) => tracing::debug!(container = ?container, "container removed"),
            Err(e) => tracing::debug!(container = ?container, error = %e, "container not removed"),
        }
        removed
    }
}
