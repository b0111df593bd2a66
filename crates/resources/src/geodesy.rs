//! Distances on the WGS-84 ellipsoid (Karney's geodesic via the `geo` crate): one function for
//! the transport model, the clusters and the data checks.

use geo::{Distance, Geodesic, Point};

/// Geodesic distance in km between two (lat, lng) positions in decimal degrees.
pub fn distance_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    Geodesic.distance(Point::new(a.1, a.0), Point::new(b.1, b.0)) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_distances() {
        // 北京 (天安门) to 上海 (人民广场): about 1,067 km on the ellipsoid
        let d = distance_km((39.9042, 116.4074), (31.2304, 121.4737));
        assert!((d - 1067.0).abs() < 5.0, "{d}");
        assert_eq!(distance_km((30.0, 100.0), (30.0, 100.0)), 0.0);
        // symmetric
        let (a, b) = ((29.65, 91.13), (29.65, 94.36));
        assert!((distance_km(a, b) - distance_km(b, a)).abs() < 1e-9);
    }
}
