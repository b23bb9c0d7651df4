"""Jobs the assistant runs on its own: reminders and cron jobs (`Scheduler`) and mail monitoring.

Both keep their state in the memory database (`storage.url`) and deliver through the bus to the
channel a job came from.
"""

from nerve.assistant.jobs.scheduler import Scheduler, bus_delivery, parse_at
from nerve.assistant.jobs.store import Job, JobStore, job_store_from_url

__all__ = ["Job", "JobStore", "Scheduler", "bus_delivery", "job_store_from_url", "parse_at"]
