"""Text for people: a model's Split nodes, an array, a type, and the rows of the outputs of a
Split, as the command line and the reports print them."""

from ._describe import (
    SplitOutputDescription,
    SplitOutputRow,
    describe_array,
    describe_split_nodes,
    describe_type,
    split_output_rows,
)

__all__ = [
    "SplitOutputDescription",
    "SplitOutputRow",
    "describe_array",
    "describe_split_nodes",
    "describe_type",
    "split_output_rows",
]
