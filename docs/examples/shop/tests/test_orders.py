"""Contract checks of the orders API, run by preflight's pytest runner.

The runner passes each service's and mock's base URL as PREFLIGHT_<NAME>_URL.
"""

import json
import os
import urllib.error
import urllib.request

ORDERS = os.environ["PREFLIGHT_ORDERS_URL"]


def _post(path, body):
    request = urllib.request.Request(ORDERS + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_unknown_order_is_404():
    try:
        urllib.request.urlopen(ORDERS + "/orders/nope", timeout=10)
    except urllib.error.HTTPError as error:
        assert error.code == 404
    else:
        raise AssertionError("expected 404")


def test_unknown_sku_is_out_of_stock():
    status, body = _post("/orders", {"sku": "unicorn", "qty": 1, "price": 3})
    assert (status, body["error"]) == (409, "out of stock")
