int faultlineViewsAnchor = 0;
