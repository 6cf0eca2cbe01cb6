"""The results page: scored rows as one self-contained HTML file (`localjudge view`).

`rows` gathers the rows and embeds them as escaped JSON; `page` holds the page's CSS and script.
"""

from localjudge.view.rows import PAGE_SUFFIXES, default_out, write_view

__all__ = ["PAGE_SUFFIXES", "default_out", "write_view"]
