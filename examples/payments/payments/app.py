"""The payments team's worker: its business function and nothing else. The guard, the batch loop,
the lines and the metrics come from guarded_consumer, which the construct bundles beside this file."""

from __future__ import annotations

from typing import Any

from guarded_consumer import InvalidBody, guarded_handler, json_object

CURRENCIES = ("EUR", "GBP", "USD")
FEE_PERCENT = 2


def payment(body: str) -> dict[str, Any]:
    """The item stored for a payment message, or InvalidBody naming what is wrong."""
    data = json_object(body)
    payment_id = data.get("payment_id")
    if not isinstance(payment_id, str) or not payment_id.strip():
        raise InvalidBody(f"payment_id must be a non-empty string, got {payment_id!r}")
    amount = data.get("amount_cents")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise InvalidBody(f"amount_cents must be a positive integer, got {amount!r}", payment_id)
    currency = data.get("currency")
    if currency not in CURRENCIES:
        raise InvalidBody(f"currency must be one of {', '.join(CURRENCIES)}, got {currency!r}", payment_id)
    extra = sorted(set(data) - {"payment_id", "amount_cents", "currency"})
    if extra:
        raise InvalidBody(f"unexpected field: {', '.join(extra)}", payment_id)
    # The fee is the result the first delivery reached: not compared, so a later change of the
    # rate never turns a redelivered payment into a conflict.
    return {
        "payment_id": payment_id,
        "amount_cents": amount,
        "currency": currency,
        "fee_cents": amount * FEE_PERCENT // 100,
    }


handler = guarded_handler(payment, key="payment_id", same=("amount_cents", "currency"))
