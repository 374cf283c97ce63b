//! VTK outputs of grids without nodes along an axis.

use induction::output::{write_pvti, write_vti};
use induction::{Case, Config, Error};

/// Regression: `write_pvti` computed the whole extent's last node as n − 1 without checking the
/// grid, so a grid with an axis of no nodes panicked ("attempt to subtract with overflow"; in a
/// release build it wrote usize::MAX). Now it is refused as `write_vti` refuses it, and no
/// file is written.
#[test]
fn pvti_of_a_grid_with_an_empty_axis_is_refused_as_vti_is() {
    let dir = std::env::temp_dir().join(format!("induction-output-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for n in [[0, 8, 8], [8, 0, 8], [8, 8, 0]] {
        let mut cfg = Config::new(Case::Rotation3d, 2, 8);
        cfg.n = n;
        let (vti, pvti) = (dir.join("b.vti"), dir.join("b.pvti"));
        let want = write_vti(&vti, &cfg, &[], &[]).unwrap_err();
        let got = write_pvti(&pvti, &cfg, &[([[0, 0]; 3], "b.vti".into())]).unwrap_err();
        assert!(matches!(got, Error::Config(_)), "{n:?}: {got:?}");
        assert_eq!(got.to_string(), want.to_string(), "{n:?}");
        assert!(!pvti.exists() && !vti.exists(), "{n:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
