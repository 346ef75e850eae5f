"""What every program prints last: one `RESULT {json}` line that tests/test_programs.py reads
(the parameter count and the loss trajectory), the same under torch and under ember.run."""
import json


def report(model_or_params, losses, **extra):
    """Print the RESULT line: parameter count, losses (floats), and any extra facts."""
    params = model_or_params.parameters() if hasattr(model_or_params, "parameters") \
        else model_or_params
    count = sum(p.numel() for p in params)
    print("RESULT " + json.dumps({"params": count, "losses": [float(x) for x in losses],
                                  **extra}))
