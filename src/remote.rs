//! Reading logs where they live: `--storage-option` and `--history-server`, and the registry
//! of remote stores installed before a command reads anything (`sparkdiag-remote`).

/// The flags `analyze`, `batch`, `diff` and `mcp` share for remote logs.
#[derive(clap::Args, Default)]
pub struct StorageFlags {
    /// An option of the store an s3://, gs://, abfss:// or az:// path names (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000, aws_region=eu-west-1, azure_storage_account_name=acct,
    /// google_service_account=key.json, max_retries=3. Credentials come from each cloud's
    /// usual chain (environment, profile files, instance or workload identity); an option wins
    /// over the environment. docs/inputs.md lists every key.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = sparkdiag_remote::StorageOptions::parse_pair)]
    pub storage_options: Vec<(String, String)>,
}

impl StorageFlags {
    /// Makes s3://, gs://, abfss://, az:// and History Server URLs readable by every later
    /// `discover` of this process.
    pub fn install(&self) -> anyhow::Result<()> {
        sparkdiag_remote::install(sparkdiag_remote::StorageOptions(
            self.storage_options.clone(),
        ))?;
        Ok(())
    }
}
