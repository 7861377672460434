//! Folds events into the model, with the History Server's counting rules
//! (`AppStatusListener` in Spark's `core/src/main/scala/org/apache/spark/status/`).

use sparkdiag_eventlog::events::{self, Event, StageInfo};

use crate::model::*;

/// The builder's lookups by id, made for every task event (its stage, its executor): SipHash,
/// std's default, was 2.5% of `analyze`'s instructions in them (callgrind). foldhash is seeded
/// at random per process like std's, so ids in a hostile log cannot be chosen to collide.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Builds an [`Application`] from events fed in log order.
#[derive(Default)]
pub struct ApplicationBuilder {
    app: Application,
    jobs: HashMap<i64, usize>,
    stages: HashMap<(i64, i64), usize>,
    /// The stage attempt [`ApplicationBuilder::stage_index`] found last, by id and attempt.
    last_stage: Option<((i64, i64), usize)>,
    executors: HashMap<String, u32>,
    sql: HashMap<i64, usize>,
    /// Per stage attempt, the jobs it counts toward (running jobs naming it when submitted).
    stage_jobs: Vec<Vec<usize>>,
    /// Stage id -> the jobs that named it, and -> its attempts: applications with thousands of
    /// jobs (a driver loop) must not scan every job or stage per event.
    jobs_naming_stage: HashMap<i64, Vec<usize>>,
    attempts_of_stage: HashMap<i64, Vec<usize>>,
    /// Day number -> the earliest and latest timestamp seen that day, to find clock jumps
    /// without keeping every timestamp.
    days: std::collections::BTreeMap<i64, (i64, i64)>,
    /// Keeps every task as read instead of folding completed stages (to check the folding).
    keep_tasks_unfolded: bool,
    /// Folds completed stages beside the reading.
    folder: FolderState,
}

/// The builder's folding thread, started at the first stage to fold.
#[derive(Default)]
enum FolderState {
    #[default]
    NotStarted,
    Running(crate::folder::Folder),
    /// The system gave no thread: the stages are folded on the reading thread.
    Unavailable,
}

impl ApplicationBuilder {
    /// A builder that never folds a completed stage's tasks: memory grows with every task
    /// (168 bytes each). Only to check that folding changes nothing.
    pub fn keeping_tasks_unfolded() -> ApplicationBuilder {
        ApplicationBuilder {
            keep_tasks_unfolded: true,
            ..ApplicationBuilder::default()
        }
    }

    pub fn on_event(&mut self, event: Event<'_>) {
        self.app.events += 1;
        if !matches!(&event, Event::Other(name) if !events::is_known_event_name(name)) {
            self.app.spark_events += 1;
        }
        match event {
            Event::LogStart(e) => self.app.spark_version = Some(e.spark_version.into_owned()),
            Event::DatabricksMetadata(e) => {
                if let Some(v) = e.spark_version.filter(|v| !v.is_empty()) {
                    self.app.databricks_spark_version = Some(v.into_owned());
                }
            }
            Event::ApplicationStart(e) => {
                self.app.name = Some(e.app_name.into_owned());
                self.app.id = e.app_id.map(|s| s.into_owned());
                self.app.attempt_id = e.attempt_id.map(|s| s.into_owned());
                self.app.user = e.user.map(|s| s.into_owned());
                self.app.start_ms = Some(e.timestamp);
                self.seen(e.timestamp);
            }
            Event::ApplicationEnd(e) => {
                self.app.end_ms = Some(e.timestamp);
                self.app.exit_code = e.exit_code;
                self.seen(e.timestamp);
            }
            Event::EnvironmentUpdate(e) => {
                for (key, value) in e.spark_properties.0 {
                    if key == "spark.databricks.clusterUsageTags.sparkVersion" {
                        self.app.databricks_runtime = Some(value.to_string());
                    }
                    self.app
                        .spark_properties
                        .insert(key.into_owned(), value.into_owned());
                }
            }
            Event::JobStart(e) => self.job_start(*e),
            Event::JobEnd(e) => self.job_end(e),
            Event::StageSubmitted(e) => self.stage_submitted(&e.stage_info),
            Event::StageCompleted(e) => self.stage_completed(&e.stage_info),
            Event::TaskStart(e) => {
                let stage = self.stage_index(e.stage_id, e.stage_attempt_id, None);
                let launch = e.task_info.launch_time;
                let first = &mut self.app.stages[stage].first_task_launched_ms;
                *first = Some(first.map_or(launch, |t: i64| t.min(launch)));
                let exec = self.executor_index(&e.task_info.executor_id, &e.task_info.host);
                self.app.executors[exec as usize].total_tasks += 1;
                self.seen(launch);
            }
            Event::TaskEnd(e) => self.task_end(&e),
            Event::ExecutorAdded(e) => {
                let exec = self.executor_index(&e.executor_id, &e.info.host);
                let exec = &mut self.app.executors[exec as usize];
                exec.added_ms = Some(e.timestamp);
                exec.cores = Some(e.info.total_cores);
                if !e.info.host.is_empty() {
                    exec.host = e.info.host.into_owned();
                }
                self.seen(e.timestamp);
            }
            Event::ExecutorRemoved(e) => {
                let exec = self.executor_index(&e.executor_id, "");
                let exec = &mut self.app.executors[exec as usize];
                exec.removed_ms = Some(e.timestamp);
                exec.removed_reason = Some(e.reason.into_owned()).filter(|r| !r.is_empty());
                self.seen(e.timestamp);
            }
            Event::BlockManagerAdded(e) => {
                let exec = self.executor_index(&e.block_manager.executor_id, &e.block_manager.host);
                let exec = &mut self.app.executors[exec as usize];
                exec.max_memory = Some(e.max_memory);
                if exec.added_ms.is_none() && e.timestamp > 0 {
                    exec.added_ms = Some(e.timestamp);
                }
            }
            Event::StageExecutorMetrics(e) => {
                let exec = self.executor_index(&e.executor_id, "");
                raise(
                    &mut self.app.executors[exec as usize].peak_metrics,
                    &e.metrics,
                );
                if let Some(&stage) = self.stages.get(&(e.stage_id, e.stage_attempt_id)) {
                    raise(
                        &mut self.app.stages[stage].peak_executor_metrics,
                        &e.metrics,
                    );
                }
            }
            Event::SqlExecutionStart(e) => {
                let idx = self.sql_index(e.execution_id);
                let sql = &mut self.app.sql[idx];
                sql.root_execution_id = e.root_execution_id;
                sql.description = e.description.into_owned();
                sql.details = e.details.into_owned().into();
                sql.start_ms = Some(e.time);
                sql.plan_description = e.physical_plan_description.into_owned().into();
                sql.plan = e.spark_plan_info;
                self.seen(e.time);
            }
            Event::SqlExecutionEnd(e) => {
                let idx = self.sql_index(e.execution_id);
                let sql = &mut self.app.sql[idx];
                sql.end_ms = Some(e.time);
                // No re-plan comes after the end: the plan texts are read only by the analysis.
                sql.pack_texts();
                sql.error = e
                    .error_message
                    .map(|m| m.into_owned())
                    .filter(|m| !m.is_empty());
                self.seen(e.time);
            }
            Event::SqlDriverAccumUpdates(e) => {
                let idx = self.sql_index(e.execution_id);
                self.app.sql[idx].driver_metrics.extend(e.updates);
            }
            Event::SqlAdaptiveExecutionUpdate(e) => {
                let idx = self.sql_index(e.execution_id);
                let sql = &mut self.app.sql[idx];
                sql.final_plan_description = Some(e.physical_plan_description.into_owned().into());
                sql.final_plan = e.spark_plan_info;
            }
            Event::StreamingQuery(e) => {
                if let sparkdiag_eventlog::streaming::QueryEvent::Progress(p) = &e
                    && let Some(t) = p
                        .timestamp
                        .as_deref()
                        .and_then(crate::streaming::parse_iso_ms)
                {
                    self.seen(t);
                }
                self.app.streaming.on_query_event(e, self.app.last_event_ms);
            }
            Event::Other(_) => {}
        }
    }

    /// Groups tasks by stage attempt and links SQL executions to their jobs.
    pub fn finish(mut self) -> Application {
        if let FolderState::Running(folder) = std::mem::take(&mut self.folder) {
            folder.finish(&mut self.app.tasks);
        }
        let app = &mut self.app;
        app.tasks
            .finish(app.stages.len(), !self.keep_tasks_unfolded);
        for (i, stage) in app.stages.iter_mut().enumerate() {
            stage.tasks = app.tasks.positions(i);
        }
        // Spark 1.x wrote no job times: take them from the job's stages.
        for job in app.jobs.iter_mut().filter(|j| j.submission_ms.is_none()) {
            let attempts = &self.attempts_of_stage;
            let stages = || {
                job.stage_ids
                    .iter()
                    .flat_map(|id| attempts.get(id).into_iter().flatten())
                    .map(|&i| &app.stages[i])
            };
            job.submission_ms = stages().filter_map(|s| s.submission_ms).min();
            if job.status != JobStatus::Running {
                job.completion_ms = job
                    .completion_ms
                    .or(stages().filter_map(|s| s.completion_ms).max());
            }
        }
        for job in &app.jobs {
            if let Some(&idx) = job.sql_execution_id.and_then(|id| self.sql.get(&id)) {
                app.sql[idx].job_ids.push(job.job_id);
            }
        }
        let mut previous: Option<i64> = None;
        for &(first, last) in self.days.values() {
            if let Some(p) = previous.filter(|&p| first - p >= CLOCK_JUMP_MS) {
                app.clock_jumps.push((p, first));
            }
            previous = Some(last);
        }
        // The executions the log left running: no event will replace their texts now.
        for sql in &mut app.sql {
            sql.pack_texts();
        }
        // The application is held whole through the analysis: the room its lists grew into is
        // given back (the stage attempts' alone was 4 MB on a log of 9,490 of them).
        app.stages.shrink_to_fit();
        app.jobs.shrink_to_fit();
        app.sql.shrink_to_fit();
        self.app
    }

    /// Folds stage attempt `stage`'s tasks, on the folder's thread when it has room.
    fn fold(&mut self, stage: usize) {
        if matches!(self.folder, FolderState::NotStarted) {
            self.folder = crate::folder::Folder::start()
                .map_or(FolderState::Unavailable, FolderState::Running);
        }
        let FolderState::Running(folder) = &mut self.folder else {
            self.app.tasks.fold(stage);
            return;
        };
        folder.collect(&mut self.app.tasks);
        if let Some(tasks) = self.app.tasks.take_to_fold(stage)
            && let Err(mut tasks) = folder.hand(stage, tasks)
        {
            let folded = crate::tasks::Folded::new(&mut tasks);
            self.app.tasks.put_folded(stage, folded);
        }
    }

    fn seen(&mut self, time: i64) {
        if time > 0 {
            let day = self.days.entry(time / 86_400_000).or_insert((time, time));
            day.0 = day.0.min(time);
            day.1 = day.1.max(time);
            self.app.last_event_ms = Some(self.app.last_event_ms.map_or(time, |t| t.max(time)));
        }
    }

    fn job_start(&mut self, e: events::JobStart<'_>) {
        let props = e.properties.unwrap_or_default();
        if self.app.databricks_notebook.is_none() {
            self.app.databricks_notebook =
                props.databricks_notebook.as_ref().map(|p| p.to_string());
        }
        if self.app.databricks_job_run.is_none()
            && let Some(run_id) = &props.databricks_job_run
        {
            self.app.databricks_job_run = Some(crate::model::DatabricksJobRun {
                job_id: props.databricks_job_id.as_ref().map(|t| t.to_string()),
                run_id: run_id.to_string(),
                task_type: props.databricks_job_type.as_ref().map(|t| t.to_string()),
            });
        }
        self.app.streaming.on_job_start(
            e.job_id,
            &crate::streaming::JobStreamingProps {
                query_id: props.streaming_query_id.as_deref(),
                batch_id: props.streaming_batch_id.as_deref(),
                job_group: props.job_group.as_deref(),
                description: props.description.as_deref(),
                dstream_batch_time: props.dstream_batch_time.as_deref(),
                job_tags: props.job_tags.as_deref(),
            },
        );
        let stage_ids = if e.stage_ids.is_empty() {
            e.stage_infos.iter().map(|s| s.stage_id).collect()
        } else {
            e.stage_ids.clone()
        };
        let last_stage = e.stage_infos.iter().max_by_key(|s| s.stage_id);
        let name = last_stage.map(|s| s.name.to_string()).unwrap_or_default();
        let library = last_stage
            .and_then(|s| s.details.as_deref())
            .and_then(crate::call_site::library_caller);
        let job = Job {
            library,
            job_id: e.job_id,
            submission_ms: Some(e.submission_time).filter(|&t| t >= 0),
            completion_ms: None,
            status: JobStatus::Running,
            failure: None,
            name,
            description: props.description.map(|s| s.into_owned()),
            job_group: props.job_group.map(|s| s.into_owned()),
            call_site: props.call_site.map(|s| s.into_owned()),
            sql_execution_id: props.sql_execution_id.and_then(|s| s.parse().ok()),
            stage_ids,
            num_tasks: e
                .stage_infos
                .iter()
                .filter(|s| s.completion_time.is_none())
                .map(|s| s.num_tasks)
                .sum(),
            completed_tasks: 0,
            failed_tasks: 0,
            killed_tasks: 0,
            skipped_tasks: 0,
            completed_stages: Vec::new(),
            skipped_stages: Vec::new(),
            failed_stages: 0,
        };
        let job_idx = self.app.jobs.len();
        self.jobs.insert(e.job_id, job_idx);
        for &stage_id in &job.stage_ids {
            self.jobs_naming_stage
                .entry(stage_id)
                .or_default()
                .push(job_idx);
        }
        self.app.jobs.push(job);
        for info in &e.stage_infos {
            let stage = self.stage_index(info.stage_id, info.attempt_id, Some(info));
            let ids = &mut self.app.stages[stage].job_ids;
            if !ids.contains(&e.job_id) {
                ids.push(e.job_id);
            }
            if !self.stage_jobs[stage].contains(&job_idx) {
                self.stage_jobs[stage].push(job_idx);
            }
        }
        self.seen(e.submission_time);
    }

    fn job_end(&mut self, e: events::JobEnd<'_>) {
        let Some(&job_idx) = self.jobs.get(&e.job_id) else {
            return;
        };
        let failed = e.result.result != "JobSucceeded";
        {
            let job = &mut self.app.jobs[job_idx];
            job.completion_ms = Some(e.completion_time).filter(|&t| t >= 0);
            job.status = if failed {
                JobStatus::Failed
            } else {
                JobStatus::Succeeded
            };
            job.failure = e
                .result
                .exception
                .and_then(|x| x.message)
                .map(|m| m.into_owned());
        }
        // Stages the job named but never ran were skipped: their output already existed.
        for i in 0..self.app.jobs[job_idx].stage_ids.len() {
            let stage_id = self.app.jobs[job_idx].stage_ids[i];
            for &idx in self.attempts_of_stage.get(&stage_id).into_iter().flatten() {
                let stage = &mut self.app.stages[idx];
                if stage.status != StageStatus::Pending {
                    continue;
                }
                stage.status = StageStatus::Skipped;
                let job = &mut self.app.jobs[job_idx];
                if !job.skipped_stages.contains(&stage_id) {
                    job.skipped_stages.push(stage_id);
                }
                job.skipped_tasks += stage.num_tasks;
            }
        }
        self.seen(e.completion_time);
    }

    fn stage_submitted(&mut self, info: &StageInfo<'_>) {
        let stage = self.stage_index(info.stage_id, info.attempt_id, Some(info));
        let s = &mut self.app.stages[stage];
        s.status = StageStatus::Active;
        s.submission_ms = info.submission_time.filter(|&t| t >= 0);
        let jobs = &self.app.jobs;
        let running: Vec<usize> = self
            .jobs_naming_stage
            .get(&info.stage_id)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&j| jobs[j].status == JobStatus::Running)
            .collect();
        self.app.stages[stage].job_ids = running.iter().map(|&j| self.app.jobs[j].job_id).collect();
        self.stage_jobs[stage] = running;
        if let Some(t) = info.submission_time {
            self.seen(t);
        }
    }

    fn stage_completed(&mut self, info: &StageInfo<'_>) {
        let stage = self.stage_index(info.stage_id, info.attempt_id, Some(info));
        let s = &mut self.app.stages[stage];
        s.submission_ms = info.submission_time.filter(|&t| t >= 0).or(s.submission_ms);
        s.completion_ms = info.completion_time.filter(|&t| t >= 0);
        s.failure_reason = info.failure_reason.as_ref().map(|r| r.to_string());
        s.sql_metrics = info
            .accumulables
            .iter()
            .filter(|a| a.metadata.as_deref() == Some("sql"))
            .filter_map(|a| Some((a.id, a.value.as_ref()?.as_i64()?)))
            .collect();
        // Held to the end, for every stage attempt: without the room it grew into.
        s.sql_metrics.shrink_to_fit();
        s.status = if s.failure_reason.is_some() {
            StageStatus::Failed
        } else if info.submission_time.is_some() {
            StageStatus::Complete
        } else {
            StageStatus::Skipped
        };
        let status = s.status;
        for &j in &self.stage_jobs[stage] {
            let job = &mut self.app.jobs[j];
            match status {
                StageStatus::Complete => {
                    if !job.completed_stages.contains(&info.stage_id) {
                        job.completed_stages.push(info.stage_id);
                    }
                }
                StageStatus::Skipped => {
                    if !job.skipped_stages.contains(&info.stage_id) {
                        job.skipped_stages.push(info.stage_id);
                    }
                    job.skipped_tasks += info.num_tasks;
                }
                _ => job.failed_stages += 1,
            }
        }
        if !self.keep_tasks_unfolded {
            self.fold(stage);
        }
        if let Some(t) = info.completion_time {
            self.seen(t);
        }
    }

    fn task_end(&mut self, e: &events::TaskEnd<'_>) {
        let info = &e.task_info;
        let stage = self.stage_index(e.stage_id, e.stage_attempt_id, None);
        let exec = self.executor_index(&info.executor_id, &info.host);
        let reason = e.reason.reason.as_ref();
        let outcome = match reason {
            "Success" => TaskOutcome::Success,
            "TaskKilled" | "TaskCommitDenied" => TaskOutcome::Killed,
            _ => TaskOutcome::Failed,
        };
        // A Resubmitted end repeats a task whose metrics were already counted.
        let resubmitted = reason == "Resubmitted";
        let duration = if info.finish_time > 0 {
            (info.finish_time - info.launch_time).max(0)
        } else {
            0
        };
        let getting_result = if info.getting_result_time > 0 {
            (info.launch_time + duration - info.getting_result_time).max(0)
        } else {
            0
        };

        let s = &mut self.app.stages[stage];
        match outcome {
            TaskOutcome::Success => s.completed_tasks += 1,
            TaskOutcome::Failed => s.failed_tasks += 1,
            TaskOutcome::Killed => s.killed_tasks += 1,
        }
        if let (Some(m), false) = (&e.metrics, resubmitted) {
            s.totals.add(m);
        }
        if let Some(peaks) = &e.executor_metrics {
            raise(&mut s.peak_executor_metrics, peaks);
        }
        for &j in &self.stage_jobs[stage] {
            let job = &mut self.app.jobs[j];
            match outcome {
                TaskOutcome::Success => job.completed_tasks += 1,
                TaskOutcome::Failed => job.failed_tasks += 1,
                TaskOutcome::Killed => job.killed_tasks += 1,
            }
        }

        let x = &mut self.app.executors[exec as usize];
        match outcome {
            TaskOutcome::Success => x.completed_tasks += 1,
            TaskOutcome::Failed => x.failed_tasks += 1,
            TaskOutcome::Killed => x.killed_tasks += 1,
        }
        x.task_time_ms += duration;
        if let (Some(m), false) = (&e.metrics, resubmitted) {
            x.run_time_ms += m.executor_run_time;
            x.jvm_gc_time_ms += m.jvm_gc_time;
            x.input_bytes += m.input.bytes_read;
            x.shuffle_read_bytes +=
                m.shuffle_read.local_bytes_read + m.shuffle_read.remote_bytes_read;
            x.shuffle_write_bytes += m.shuffle_write.bytes_written;
            x.memory_spill_bytes += m.memory_bytes_spilled;
            x.disk_spill_bytes += m.disk_bytes_spilled;
        }
        // The History Server shows peaks once any task ended here; absent metrics read as zeros.
        let peaks = e
            .executor_metrics
            .as_ref()
            .unwrap_or(&events::ExecutorMetrics::ZERO);
        raise(&mut x.peak_metrics, peaks);

        if outcome != TaskOutcome::Success {
            let r = &e.reason;
            let message = r
                .description
                .as_ref()
                .or(r.kill_reason.as_ref())
                .or(r.message.as_ref())
                .or(r.loss_reason.as_ref())
                .map(|m| truncate(m, 2000));
            self.app.task_failures.push(TaskFailure {
                task_id: info.task_id,
                stage_id: e.stage_id,
                stage_attempt_id: e.stage_attempt_id,
                executor: exec,
                finish_ms: info.finish_time,
                reason: reason.to_string(),
                exception_class: r.class_name.as_ref().map(|c| c.to_string()),
                message,
                root_cause: r.full_stack_trace.as_deref().and_then(innermost_cause),
            });
        }
        self.app.tasks.push(Task {
            task_id: info.task_id,
            launch_ms: info.launch_time,
            duration_ms: duration.min(u32::MAX as i64) as u32,
            stage: stage as u32,
            executor: exec,
            index: info.index.clamp(0, u32::MAX as i64) as u32,
            attempt: info.attempt.clamp(0, u16::MAX as i64) as u16,
            outcome,
            speculative: info.speculative,
            has_metrics: e.metrics.is_some(),
            locality: crate::model::Locality::parse(&info.locality),
            getting_result_ms: getting_result.min(u32::MAX as i64) as u32,
            metrics: e
                .metrics
                .as_ref()
                .map(TaskMetricsCompact::from_event)
                .unwrap_or_default(),
        });
        self.seen(info.finish_time);
    }

    fn stage_index(
        &mut self,
        stage_id: i64,
        attempt_id: i64,
        info: Option<&StageInfo<'_>>,
    ) -> usize {
        // Task events come in runs of one stage attempt: the last one found is looked at first.
        if let (Some((key, idx)), None) = (self.last_stage, info)
            && key == (stage_id, attempt_id)
        {
            return idx;
        }
        let idx = *self
            .stages
            .entry((stage_id, attempt_id))
            .or_insert_with(|| {
                self.app.stages.push(StageAttempt {
                    stage_id,
                    attempt_id,
                    name: String::new(),
                    num_tasks: 0,
                    parent_ids: Vec::new(),
                    status: StageStatus::Pending,
                    submission_ms: None,
                    completion_ms: None,
                    first_task_launched_ms: None,
                    failure_reason: None,
                    job_ids: Vec::new(),
                    totals: MetricTotals::default(),
                    completed_tasks: 0,
                    failed_tasks: 0,
                    killed_tasks: 0,
                    peak_executor_metrics: None,
                    tasks: 0..0,
                    sql_metrics: Vec::new(),
                });
                self.stage_jobs.push(Vec::new());
                self.attempts_of_stage
                    .entry(stage_id)
                    .or_default()
                    .push(self.app.stages.len() - 1);
                self.app.stages.len() - 1
            });
        if let Some(info) = info {
            let s = &mut self.app.stages[idx];
            s.name = info.name.to_string();
            s.num_tasks = info.num_tasks;
            s.parent_ids = info.parent_ids.clone();
        }
        self.last_stage = Some(((stage_id, attempt_id), idx));
        idx
    }

    fn executor_index(&mut self, id: &str, host: &str) -> u32 {
        if let Some(&idx) = self.executors.get(id) {
            let exec = &mut self.app.executors[idx as usize];
            if exec.host.is_empty() && !host.is_empty() {
                exec.host = host.to_string();
            }
            return idx;
        }
        let idx = self.app.executors.len() as u32;
        self.app.executors.push(Executor {
            id: id.to_string(),
            host: host.to_string(),
            ..Executor::default()
        });
        self.executors.insert(id.to_string(), idx);
        idx
    }

    fn sql_index(&mut self, execution_id: i64) -> usize {
        *self.sql.entry(execution_id).or_insert_with(|| {
            self.app.sql.push(SqlExecution {
                execution_id,
                root_execution_id: None,
                description: String::new(),
                details: Default::default(),
                start_ms: None,
                end_ms: None,
                error: None,
                plan_description: Default::default(),
                plan: None,
                final_plan_description: None,
                final_plan: None,
                job_ids: Vec::new(),
                driver_metrics: Vec::new(),
            });
            self.app.sql.len() - 1
        })
    }
}

/// The last `Caused by:` line of a Java stack trace: the exception at the root of the chain.
fn innermost_cause(stack: &str) -> Option<String> {
    stack
        .lines()
        .rev()
        .find_map(|l| l.trim_start().strip_prefix("Caused by:"))
        .map(|l| truncate(l.trim(), 1000))
}

fn raise(peak: &mut Option<events::ExecutorMetrics>, metrics: &events::ExecutorMetrics) {
    peak.get_or_insert_with(Default::default).raise_to(metrics);
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod caused_by {
    #[test]
    fn the_innermost_cause_is_the_last_caused_by() {
        let stack = "org.apache.spark.SparkException: Exception thrown in awaitResult: \n\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:56)\nCaused by: java.util.concurrent.ExecutionException: boom\n\tat x.y(Z.java:1)\nCaused by: java.io.IOException: Could not read footer for file: file:/data/part-0001.parquet\n\tat a.b(C.java:2)\n\t... 20 more\n";
        assert_eq!(
            super::innermost_cause(stack).as_deref(),
            Some(
                "java.io.IOException: Could not read footer for file: file:/data/part-0001.parquet"
            )
        );
        assert_eq!(
            super::innermost_cause("java.lang.RuntimeException: x\n\tat a.b(C.java:1)"),
            None
        );
    }
}
