"""Live push: the hub that fans committed changes out to browsers, peer servers, and the deltas a commit makes."""
