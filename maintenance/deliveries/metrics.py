"""The deliveries' series for `/metrics`, read from the database at each scrape; found
through maintenance/metrics.py, which board.serving.metrics imports."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from board.serving import metrics
from maintenance.deliveries import selectors


@metrics.source
def deliveries() -> Iterator[Metric]:
    family = GaugeMetricFamily(
        "settle_deliveries", "Outbound deliveries now in each state.", labels=["state"]
    )
    for state, count in sorted(selectors.deliveries_count_by_state().items()):
        family.add_metric([state], count)
    yield family
